// A hostile stand-in of the platform's HTTP API (the ServiceURL: provider status, the model catalogue,
// demand rates, the provider's stats; and an update feed): every answer is the attack chosen by `mode` —
// nested 6,000 deep, 9 MB, 600,000 keys, or not JSON at all.
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type PlatformMode = 'deep' | 'huge' | 'wide' | 'garbage';

export class HostilePlatform {
  mode: PlatformMode = 'deep';
  /** Paths asked, in order. */
  readonly asked: string[] = [];
  port = 0;
  private readonly sockets = new Set<Socket>();
  private readonly server = http.createServer((req, res) => this.answer(req, res));

  static async start(): Promise<HostilePlatform> {
    const p = new HostilePlatform();
    p.server.on('connection', (s) => {
      p.sockets.add(s);
      s.on('close', () => p.sockets.delete(s));
    });
    await new Promise<void>((r) => p.server.listen(0, '127.0.0.1', r));
    p.port = (p.server.address() as AddressInfo).port;
    return p;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    return new Promise((r) => this.server.close(() => r()));
  }

  private answer(req: http.IncomingMessage, res: http.ServerResponse): void {
    this.asked.push(req.url ?? '');
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' });
    switch (this.mode) {
      case 'deep':
        return void res.end(`{"code":0,"data":{"list":${'['.repeat(6000)}${']'.repeat(6000)},"models":${'{"a":'.repeat(6000)}1${'}'.repeat(6000)}}}`);
      case 'huge':
        return void res.end(`{"code":0,"data":{"list":[],"pad":"${'x'.repeat(9 * 1024 * 1024)}"}}`);
      case 'wide':
        return void res.end(`{"code":0,"data":{${Array.from({ length: 600_000 }, (_, i) => `"k${i}":0`).join(',')}}}`);
      case 'garbage':
        return void res.end('<html><body>502 Bad Gateway</body></html>');
    }
  }
}
