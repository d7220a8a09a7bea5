// A plain HTTP GET against a local server, with the Host header a browser would send, read to the end.
// Each request opens its own connection (no keep-alive pool), so a test sees exactly the server's answer
// to that request and nothing lingers after it.
import http from 'node:http';

export interface Res {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export function get(port: number, pathName: string, headers: Record<string, string> = {}): Promise<Res> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: pathName, agent: false, headers: { host: `127.0.0.1:${port}`, ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end();
  });
}
