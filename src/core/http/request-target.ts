// The request target of an incoming HTTP request (or WebSocket upgrade) as a URL, never throwing.
// Node hands listeners the raw target: `//a:b`, `http://x`, `*` or garbage parse as a URL with a
// host (or not at all), and a throw in a synchronous listener stops the whole process. Only an
// origin-form target ("/path?query") is accepted, and it is parsed against a fixed base — never the
// Host header, which the client chooses.
const BASE = 'http://localhost';

/** The parsed target, or null when it is not an origin-form path (answer 400). */
export function requestTarget(raw: string | undefined): URL | null {
  const t = raw ?? '/';
  if (t.length === 0 || t[0] !== '/' || t[1] === '/' || t[1] === '\\') return null;
  try {
    const u = new URL(t, BASE);
    // Checked after normalising: "/.//evil.example/x" becomes "//evil.example/x", which a redirect built
    // from the path would send to another host.
    if (u.origin !== BASE || u.pathname.startsWith('//') || u.pathname.startsWith('/\\')) return null;
    return u;
  } catch {
    return null;
  }
}
