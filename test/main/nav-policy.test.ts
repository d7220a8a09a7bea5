// What may leave the window (openExternal) and the page's Content-Security-Policy.
import { describe, expect, it } from 'vitest';
import { contentSecurityPolicy, isExternalHttpUrl } from '../../src/main/nav-policy';

describe('isExternalHttpUrl', () => {
  it('allows http and https links to a host', () => {
    expect(isExternalHttpUrl('https://docs.swanchain.io/provider')).toBe(true);
    expect(isExternalHttpUrl('http://127.0.0.1:7777/')).toBe(true);
  });

  it('refuses every other scheme, credentials in the URL, and garbage', () => {
    for (const url of [
      'file:///etc/passwd',
      'javascript:alert(1)',
      'data:text/html,hi',
      'smb://host/share',
      'ms-msdt:/id PCWDiagnostic',
      'vbscript:msgbox',
      'https://user:pass@example.com/',
      'not a url',
      '',
    ]) {
      expect(isExternalHttpUrl(url), url).toBe(false);
    }
  });
});

describe('contentSecurityPolicy', () => {
  const directive = (csp: string, name: string) => csp.split('; ').find((d) => d.startsWith(`${name} `));

  it('allows only our own scripts in production, no eval, no inline script, no plugins, no framing', () => {
    const csp = contentSecurityPolicy({ kind: 'file', indexFile: '/app/out/renderer/index.html' });
    expect(directive(csp, 'script-src')).toBe("script-src 'self'");
    expect(csp).not.toContain('unsafe-eval');
    expect(directive(csp, 'object-src')).toBe("object-src 'none'");
    expect(directive(csp, 'frame-ancestors')).toBe("frame-ancestors 'none'");
    expect(directive(csp, 'connect-src')).toBe("connect-src 'self'");
  });

  it('lets the dev server run its HMR socket and refresh preamble, and nothing more', () => {
    const csp = contentSecurityPolicy({ kind: 'dev', url: 'http://localhost:5173/' });
    expect(directive(csp, 'connect-src')).toBe("connect-src 'self' ws://localhost:5173");
    expect(directive(csp, 'script-src')).toBe("script-src 'self' 'unsafe-inline'");
    expect(csp).not.toContain('unsafe-eval');
  });
});
