// What the window may load and what may leave it: pure rules, used by src/main/security.ts.
import type { RendererLocation } from './ipc-guard';

/** Only http(s) links go to the owner's browser; file:, javascript:, custom schemes never do. */
export function isExternalHttpUrl(url: string): boolean {
  try {
    const u = new URL(url);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '' && u.username === '' && u.password === '';
  } catch {
    return false;
  }
}

/**
 * The Content-Security-Policy of the app page. Production allows only our own files; the dev server also
 * needs inline scripts (React refresh preamble) and its HMR socket.
 */
export function contentSecurityPolicy(renderer: RendererLocation): string {
  const dev = renderer.kind === 'dev' ? new URL(renderer.url) : undefined;
  const devSocket = dev ? `${dev.protocol === 'https:' ? 'wss:' : 'ws:'}//${dev.host}` : '';
  const rules: [string, string][] = [
    ['default-src', "'self'"],
    ['script-src', dev ? "'self' 'unsafe-inline'" : "'self'"],
    // recharts and React set style attributes.
    ['style-src', "'self' 'unsafe-inline'"],
    ['img-src', "'self' data: blob:"],
    ['font-src', "'self' data:"],
    ['connect-src', dev ? `'self' ${devSocket}` : "'self'"],
    ['worker-src', "'self' blob:"],
    ['object-src', "'none'"],
    ['frame-src', "'none'"],
    ['base-uri', "'none'"],
    ['form-action', "'none'"],
    ['frame-ancestors', "'none'"],
  ];
  return rules.map(([k, v]) => `${k} ${v}`).join('; ');
}
