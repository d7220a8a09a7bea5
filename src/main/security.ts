// App-wide hardening: the page's CSP, no permissions, no navigation, no new windows, no <webview>,
// and links leave only as http(s) to the owner's browser.
import { app, session, shell, type WebContents } from 'electron';
import type { Logger } from '../core/base/log';
import { isAppUrl, type RendererLocation } from './ipc-guard';
import { contentSecurityPolicy, isExternalHttpUrl } from './nav-policy';

/** Permissions the page may use: writing to the clipboard (copy a support bundle). Everything else is refused. */
const ALLOWED_PERMISSIONS = new Set(['clipboard-sanitized-write']);

function openOutside(url: string, log: Logger): void {
  if (!isExternalHttpUrl(url)) {
    log.warn(`Blocked opening ${url.slice(0, 200)}: only http(s) links open in the browser.`);
    return;
  }
  shell.openExternal(url).catch((err: unknown) => log.warn(`Could not open ${url} in the browser: ${err instanceof Error ? err.message : String(err)}`));
}

function guardContents(contents: WebContents, renderer: RendererLocation, log: Logger): void {
  contents.setWindowOpenHandler(({ url }) => {
    openOutside(url, log);
    return { action: 'deny' };
  });
  // Renderer-initiated navigation (links, location changes). Our own loadFile/loadURL do not pass here.
  contents.on('will-navigate', (event, url) => {
    if (isAppUrl(url, renderer) && isAppUrl(contents.getURL(), renderer)) return; // same page, another route
    event.preventDefault();
    openOutside(url, log);
  });
  contents.on('will-frame-navigate', (event) => {
    if (!event.isMainFrame) event.preventDefault();
  });
  contents.on('will-redirect', (event, url) => {
    if (!isAppUrl(url, renderer)) event.preventDefault();
  });
  contents.on('will-attach-webview', (event) => event.preventDefault());
}

export function hardenApp(renderer: RendererLocation, log: Logger): void {
  const csp = contentSecurityPolicy(renderer);
  const ses = session.defaultSession;
  // Served pages (the dev server) get the policy as a header; the built index.html carries the same as a
  // <meta> tag because file:// responses have no headers to rewrite.
  ses.webRequest.onHeadersReceived((details, callback) => {
    const headers = { ...details.responseHeaders };
    for (const name of Object.keys(headers)) if (name.toLowerCase() === 'content-security-policy') delete headers[name];
    callback({ responseHeaders: { ...headers, 'Content-Security-Policy': [csp] } });
  });
  ses.setPermissionRequestHandler((_contents, permission, callback) => {
    const ok = ALLOWED_PERMISSIONS.has(permission);
    if (!ok) log.info(`Refused the page's request for the "${permission}" permission.`);
    callback(ok);
  });
  ses.setPermissionCheckHandler((_contents, permission) => ALLOWED_PERMISSIONS.has(permission));
  app.on('web-contents-created', (_event, contents) => guardContents(contents, renderer, log));
}
