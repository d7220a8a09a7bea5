// What the window may load and what may leave it: pure rules, used by src/main/security.ts.
import { contentSecurityPolicy as sharedPolicy } from '../shared/csp';
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

/** The Content-Security-Policy of the app page: the one policy (src/shared/csp.ts), with the dev server's needs in dev. */
export function contentSecurityPolicy(renderer: RendererLocation): string {
  return sharedPolicy(renderer.kind === 'dev' ? { dev: renderer.url } : {});
}
