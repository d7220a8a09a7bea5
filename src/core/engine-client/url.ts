// Engine base URLs: models.json endpoints may carry /v1 or a trailing slash; we keep the bare base.
// The one rule: the registry, health, discovery and the engine client all key endpoints by it.

/** "http://h:8000/v1/" -> "http://h:8000". Throws on a URL that is not http(s). */
export function normalizeBaseUrl(url: string): string {
  const u = new URL(url.trim());
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`engine URL must start with http:// or https://: ${url}`);
  let p = u.pathname.replace(/\/+$/, '');
  if (p.endsWith('/v1')) p = p.slice(0, -3);
  return `${u.protocol}//${u.host}${p}`;
}

/**
 * The key of an endpoint (registry and health): normalizeBaseUrl's form; an address that is not an
 * http(s) URL (a hand-edited models.json) stays as written, trimmed, so it still shows — never healthy.
 */
export function endpointKey(url: string): string {
  try {
    return normalizeBaseUrl(url);
  } catch {
    return url.trim();
  }
}

/**
 * An engine address the owner adds (engines.addEndpoint), checked before anything is sent to it: http(s)
 * only, a host, no user name or password (they would be stored in settings.json and sent on every
 * probe; an engine's key belongs in models.json's api_key). Returns the bare base; throws a message
 * that says what to fix.
 */
export function ownerEndpointUrl(raw: string): string {
  let u: URL;
  // A bare HOST:PORT means http, as the CLI's --host takes it (127.0.0.1:18124, [::1]:8080, gpu-box:11434).
  const bare = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):\d{1,5}(\/.*)?$/.test(raw.trim());
  try {
    u = new URL(bare ? `http://${raw.trim()}` : raw.trim());
  } catch {
    throw new Error('The endpoint URL must start with http:// or https://, or be HOST:PORT, for example http://127.0.0.1:8000 or 127.0.0.1:8000');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new Error('The endpoint URL must start with http:// or https://, for example http://127.0.0.1:8000');
  if (!u.hostname) throw new Error('The endpoint URL has no host; use http://HOST:PORT, for example http://127.0.0.1:8000');
  if (u.username || u.password)
    throw new Error('The endpoint URL must not contain a user name or password; put an engine key in models.json (api_key) instead.');
  return normalizeBaseUrl(`${u.protocol}//${u.host}${u.pathname}`);
}
