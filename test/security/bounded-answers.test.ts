// Issue 42, Medium 6 and the update check's redirects: the platform's catalogue and provider-status answers
// and the update feed's were read whole before any size check (1.28 GB RSS from a platform that streamed for
// its 10 s deadline), and the update check followed redirects anywhere (169.254.169.254). Each is now read
// through the one bounded reader, cut off at its limit, and a redirect is followed only to an address checked
// as the feed's own was.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryLog } from '../../src/core/base/log';
import { fetchProviderStatus } from '../../src/core/hub/provider-status';
import { Catalogue } from '../../src/core/platform/catalogue';
import { checkForUpdate } from '../../src/core/update/check';

/** How much the platform streams at most: far past every limit (8 MB the largest). */
const STREAM_BYTES = 96 * 1024 * 1024;

interface Seen {
  /** Bytes the server handed to its socket before the client went away (or it had sent all). */
  written: number;
  done: Promise<void>;
}

let server: http.Server;
let base: string;
const seen = new Map<string, Seen>();

/** An endless-looking JSON answer, written as fast as the client reads it, until it goes away. */
function stream(req: http.IncomingMessage, res: http.ServerResponse): void {
  let finish!: () => void;
  const s: Seen = { written: 0, done: new Promise((r) => (finish = r)) };
  seen.set(new URL(req.url ?? '/', 'http://x').pathname, s);
  res.writeHead(200, { 'content-type': 'application/json' });
  const chunk = Buffer.from(`"${'x'.repeat(64 * 1024 - 3)},`);
  res.write('[');
  s.written = 1;
  const pump = () => {
    while (s.written < STREAM_BYTES) {
      s.written += chunk.length;
      if (!res.write(chunk)) return void res.once('drain', pump);
    }
    res.end(']');
  };
  res.on('close', finish);
  pump();
}

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const p = new URL(req.url ?? '/', 'http://x').pathname;
    if (p === '/redirect-to-metadata/latest.yml') res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
    else if (p === '/redirect-to-metadata-name/latest.yml') res.writeHead(302, { location: 'http://[::ffff:a9fe:a9fe]/latest/meta-data/' }).end();
    else stream(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

/** What the client took before it stopped reading: far less than the stream, about the limit. */
async function takenAt(pathname: string): Promise<number> {
  const s = seen.get(pathname)!;
  await s.done;
  return s.written;
}

describe('answers from outside are read through the one bounded reader', () => {
  it('the catalogue: cut off at 8 MB, the last list kept, the error said', async () => {
    const log = memoryLog();
    const c = new Catalogue({ serviceUrl: () => base, log: log.child('catalogue'), timeoutMs: 60_000 });
    await c.refresh(true);
    expect(c.view([]).error).toMatch(/over/);
    expect(await takenAt('/api/v1/models')).toBeLessThan(8 * 1024 * 1024 + 16 * 1024 * 1024);
  });

  it('the provider status: cut off at its limit', async () => {
    const r = await fetchProviderStatus(base, 'sk-prov-key-bounded-0000', 60_000);
    expect(r.status).toBeUndefined();
    expect(r.error).toMatch(/over/);
    expect(await takenAt('/api/v1/provider/status')).toBeLessThan(16 * 1024 * 1024);
  });

  it('the update feed: cut off at its limit (feed_too_large)', async () => {
    const r = await checkForUpdate({ current: '0.1.0', feed: `${base}/feed/latest.json`, mode: 'headless', timeoutMs: 60_000 });
    expect(r.errorCode).toBe('feed_too_large');
    expect(await takenAt('/feed/latest.json')).toBeLessThan(4 * 1024 * 1024 + 16 * 1024 * 1024);
  });
});

describe('the update check follows a redirect only to a checked address', () => {
  for (const p of ['/redirect-to-metadata/latest.yml', '/redirect-to-metadata-name/latest.yml']) {
    it(`${p}: refused before any request reaches the metadata address (feed_refused_address)`, async () => {
      const r = await checkForUpdate({ current: '0.1.0', feed: `${base}${p}`, mode: 'headless', timeoutMs: 5_000 });
      expect(r.errorCode).toBe('feed_refused_address');
    });
  }

  it('a name that resolves to a metadata address is refused as the address is', async () => {
    const r = await checkForUpdate({
      current: '0.1.0',
      feed: 'http://metadata.localhost/latest.yml',
      mode: 'headless',
      timeoutMs: 5_000,
      resolve: async () => ['169.254.169.254'],
    });
    expect(r.errorCode).toBe('feed_refused_address');
  });
});
