// A browser session of the console as its own page holds it: the cookie from the sign-in link and the
// page secret from that redirect's fragment (src/core/console/auth.ts; a browser hands the fragment to the
// page and sends it to no server), and the headers and subprotocols a bridge socket of that page sends.
import http from 'node:http';
import { get } from './http';

export interface PageSession {
  /** `swan_session_<port>=…` */
  cookie: string;
  page: string;
  origin: string;
}

/** POST with headers, read to the end. */
export function post(port: number, pathName: string, headers: Record<string, string> = {}, body = ''): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: pathName,
        method: 'POST',
        agent: false,
        headers: { host: `127.0.0.1:${port}`, 'content-length': Buffer.byteLength(body), ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** The page secret in a sign-in redirect's Location (`…#swan-page=<secret>`), or undefined. */
export function pageFromLocation(location: string | undefined | null): string | undefined {
  const hash = location?.split('#')[1];
  return hash?.startsWith('swan-page=') ? hash.slice('swan-page='.length) : undefined;
}

/** Opens `link` (`/?code=…` or `/?token=…`) as a browser does, and keeps what its page would: the cookie and the fragment's secret. */
export async function signIn(port: number, link: string): Promise<PageSession> {
  const first = await get(port, link);
  const set = first.headers['set-cookie']?.[0];
  if (first.status !== 302 || !set) throw new Error(`sign-in refused (status ${first.status})`);
  const cookie = set.split(';')[0]!;
  const page = pageFromLocation(first.headers.location);
  if (!page) throw new Error('the sign-in redirect carried no page secret');
  return { cookie, page, origin: `http://127.0.0.1:${port}` };
}

/** The subprotocols the page's bridge socket offers. */
export function pageProtocols(s: PageSession): string[] {
  return ['swan-bridge', `swan-page.${s.page}`];
}
