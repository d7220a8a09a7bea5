// The one Content-Security-Policy of the UI. Used by the desktop main process (a header on every
// response, src/main/nav-policy.ts), by the browser console (a header, src/core/console/static-files.ts)
// and baked into the built index.html as a <meta> tag (vite.renderer.config.ts), because file:// pages
// have no headers. Network access goes back to this origin only: connect-src is 'self', plus the
// console's own WebSocket origin, plus (dev server only) its HMR socket — never any ws:/wss: host.
export interface CspOptions {
  /** The dev server's URL (inline React-refresh preamble, injected styles, HMR socket). */
  dev?: string;
  /** The console's own host:port (its /bridge WebSocket). */
  socketHost?: string;
  /** For a <meta> tag: frame-ancestors is ignored there and left out. */
  meta?: boolean;
}

export function contentSecurityPolicy(o: CspOptions = {}): string {
  const dev = o.dev ? new URL(o.dev) : undefined;
  const connect = ["'self'"];
  if (o.socketHost) connect.push(`ws://${o.socketHost}`, `wss://${o.socketHost}`);
  if (dev) connect.push(`${dev.protocol === 'https:' ? 'wss:' : 'ws:'}//${dev.host}`);
  const rules: [string, string][] = [
    ['default-src', "'self'"],
    ['script-src', dev ? "'self' 'unsafe-inline'" : "'self'"],
    ['style-src', dev ? "'self' 'unsafe-inline'" : "'self'"],
    ['img-src', "'self' data:"],
    ['font-src', "'self'"],
    ['connect-src', connect.join(' ')],
    ['worker-src', "'self'"],
    ['object-src', "'none'"],
    ['frame-src', "'none'"],
    ['base-uri', "'none'"],
    ['form-action', "'none'"],
  ];
  if (!o.meta) rules.push(['frame-ancestors', "'none'"]);
  return rules.map(([k, v]) => `${k} ${v}`).join('; ');
}

/** The placeholder in src/renderer/index.html that the build replaces with the policy. */
export const CSP_PLACEHOLDER = '%SWAN_CSP%';

/** index.html as built: the placeholder becomes the policy; the dev server gets no meta (its header is the policy). */
export function withCspMeta(html: string, mode: 'build' | 'serve'): string {
  const tag = new RegExp(`\\s*<meta\\s+http-equiv="Content-Security-Policy"\\s+content="${CSP_PLACEHOLDER}"\\s*/>`);
  if (!tag.test(html)) throw new Error(`index.html has no <meta http-equiv="Content-Security-Policy" content="${CSP_PLACEHOLDER}" />`);
  return mode === 'serve' ? html.replace(tag, '') : html.replace(CSP_PLACEHOLDER, contentSecurityPolicy({ meta: true }));
}
