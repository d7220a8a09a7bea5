// One file fetched, verified in the same pass: each chunk is hashed (sha256) as it is written, so the file is
// "verified" the moment its last byte lands, never read again. The bytes go to `<file>.part`; a dropped
// connection is resumed with an HTTP Range request (RFC 9110 §14: `Range: bytes=N-` → 206 with
// `Content-Range: bytes N-M/total`) and the same hash goes on. After a kill the hash of the kept part is lost
// with the process: the part is hashed once from disk (its prefix only) and the download resumes from its
// end. A server that ignores Range (200) restarts the file from byte 0. A file whose size or hash do not match
// is deleted and refused with its code; only a file that matched is renamed into place.
import { createHash, type Hash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { Transform, Writable, type TransformCallback } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import { once } from 'node:events';
import { CodedError } from '../../shared/bridge-error';

/** Why a file was not downloaded. */
export type DownloadErrorCode =
  'hash_mismatch' | 'size_mismatch' | 'http_error' | 'too_many_redirects' | 'connection_lost' | 'cancelled' | 'no_disk_space' | 'write_failed' | 'busy';

export class DownloadError extends CodedError<DownloadErrorCode> {
  override name = 'DownloadError';
}

export interface FileProgress {
  /** Bytes of this file on disk so far (resumed bytes included). */
  doneBytes: number;
  totalBytes: number;
  /** Bytes that came over the network in this run. */
  receivedBytes: number;
}

export interface FetchFileOptions {
  url: string;
  dest: string;
  /** The expected sha256 (hex); '' to only hash it here. */
  sha256: string;
  size: number;
  signal?: AbortSignal;
  onProgress?: (p: FileProgress) => void;
  /** Extra attempts after a dropped connection (each resumes where the last stopped). */
  retries?: number;
  /** Waits between attempts (ms), doubling; tests set it low. */
  retryDelayMs?: number;
  userAgent?: string;
}

export interface FetchedFile {
  sha256: string;
  size: number;
  /** Bytes that were already on disk from an earlier run and not fetched again. */
  resumedBytes: number;
  /** True when an expected hash was given and matched. */
  verified: boolean;
}

const MAX_REDIRECTS = 5;
const PROGRESS_EVERY_MS = 250;

/** Hashes a chunk and counts it (reading a kept part). */
class HashTap extends Transform {
  constructor(
    private readonly hash: Hash,
    private readonly onBytes: (n: number) => void,
  ) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.hash.update(chunk);
    this.onBytes(chunk.length);
    cb(null, chunk);
  }
}

/**
 * The one pass: each batch of chunks is hashed on the main thread while its write runs on the thread pool, so
 * neither waits for the other. A write that fails (or falls short) leaves the hash ahead of the disk: the sink
 * says so (`hashAhead`), and a resume hashes the part again from disk before going on.
 */
class HashingFileSink extends Writable {
  private fd?: number;
  /** The hash has seen bytes that did not reach the disk (a failed or short write). */
  hashAhead = false;

  constructor(
    private readonly file: string,
    private readonly append: boolean,
    private readonly hash: Hash,
    private readonly onBytes: (n: number) => void,
  ) {
    // 8 MiB of chunks gathered while a write is in flight go out in one writev and one hash pass: with 1 MiB the
    // many small writes held a loopback download to about half of curl's rate (bench: BENCH_ONLY=models).
    super({ highWaterMark: 8 << 20 });
  }

  override _construct(cb: (err?: Error | null) => void): void {
    fs.open(this.file, this.append ? 'a' : 'w', (err, fd) => {
      if (!err) this.fd = fd;
      cb(err);
    });
  }

  override _writev(chunks: Array<{ chunk: Buffer }>, cb: (err?: Error | null) => void): void {
    const bufs = chunks.map((c) => c.chunk);
    const total = bufs.reduce((a, b) => a + b.length, 0);
    fs.writev(this.fd!, bufs, (err, written) => {
      if (err) {
        this.hashAhead = true;
        return cb(err);
      }
      this.onBytes(written);
      if (written < total) this.hashAhead = true;
      // A short write (rare: a full disk) is an error: the rest is not on disk.
      cb(written < total ? Object.assign(new Error('short write'), { code: 'ENOSPC' }) : null);
    });
    // Both only read the buffers: hashing while the thread pool writes them is safe.
    for (const b of bufs) this.hash.update(b);
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    this._writev([{ chunk }], cb);
  }

  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    if (this.fd === undefined) return cb(err);
    fs.close(this.fd, () => cb(err));
  }
}

/** Hashes the first `bytes` of a kept part (after a kill: the hash state died with the process). */
async function hashPrefix(file: string, bytes: number, hash: Hash): Promise<void> {
  if (bytes === 0) return;
  await pipeline(fs.createReadStream(file, { start: 0, end: bytes - 1, highWaterMark: 4 << 20 }), new HashTap(hash, () => {}), async function* (src) {
    for await (const _ of src) void _;
  });
}

function partSize(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
}

/** GET with redirects followed (a CDN's signed URL is usual), `Range` from `from`. Resolves with the open response. */
function open(url: string, from: number, signal: AbortSignal | undefined, userAgent: string, hops = 0): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const headers: Record<string, string> = { 'user-agent': userAgent, 'accept-encoding': 'identity' };
    if (from > 0) headers.range = `bytes=${from}-`;
    const options = { headers, ...(signal ? { signal } : {}) };
    const onResponse = (res: http.IncomingMessage): void => {
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400 && res.headers.location) {
        res.resume();
        if (hops >= MAX_REDIRECTS) return reject(new DownloadError('too_many_redirects', `${u.host} redirected more than ${MAX_REDIRECTS} times`));
        const next = new URL(res.headers.location, u);
        if (next.protocol !== 'http:' && next.protocol !== 'https:')
          return reject(new DownloadError('http_error', `${u.host} redirected to a ${next.protocol} address`));
        void open(next.href, from, signal, userAgent, hops + 1).then(resolve, reject);
        return;
      }
      resolve(res);
    };
    // Model files, not an engine: the one other client of node:http(s) (test/core/inference/engine-calls.test.ts).
    const req = u.protocol === 'https:' ? https.get(u, options, onResponse) : http.get(u, options, onResponse);
    req.on('error', reject);
  });
}

/** The start of a 206's `Content-Range: bytes N-M/total`, or undefined. */
function rangeStart(res: http.IncomingMessage): number | undefined {
  const m = /^bytes (\d+)-\d+\/(\d+|\*)$/.exec(String(res.headers['content-range'] ?? ''));
  return m ? Number(m[1]) : undefined;
}

function abortedError(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

/**
 * Fetches `url` into `dest`, verified. Resumes from `<dest>.part` when one is there. On a cancel the part is
 * kept (a later run resumes it); on a mismatch it is deleted.
 */
export async function fetchFile(o: FetchFileOptions): Promise<FetchedFile> {
  const part = `${o.dest}.part`;
  let hash = createHash('sha256');
  let have = partSize(part);
  if (have > o.size) {
    fs.rmSync(part, { force: true });
    have = 0;
  }
  const resumedBytes = have;
  // After a kill: the kept bytes are hashed once; from here on every byte is hashed as it arrives.
  await hashPrefix(part, have, hash);
  let received = 0;
  let lastReport = 0;
  const report = (force = false): void => {
    const now = Date.now();
    if (!force && now - lastReport < PROGRESS_EVERY_MS) return;
    lastReport = now;
    o.onProgress?.({ doneBytes: have, totalBytes: o.size, receivedBytes: received });
  };
  const retries = o.retries ?? 5;
  let delay = o.retryDelayMs ?? 500;
  for (let attempt = 0; have < o.size || (o.size === 0 && attempt === 0); attempt++) {
    if (abortedError(o.signal)) throw new DownloadError('cancelled', 'the download was cancelled; what arrived is kept and a new download resumes from it');
    let res: http.IncomingMessage;
    try {
      res = await open(o.url, have, o.signal, o.userAgent ?? 'SwanProviderConsole');
    } catch (e) {
      if (e instanceof DownloadError) throw e;
      if (abortedError(o.signal)) throw new DownloadError('cancelled', 'the download was cancelled; what arrived is kept and a new download resumes from it');
      if (attempt >= retries) throw new DownloadError('connection_lost', `could not reach ${new URL(o.url).host}: ${(e as Error).message}`);
      await wait(delay, o.signal);
      delay *= 2;
      continue;
    }
    const status = res.statusCode ?? 0;
    if (have > 0 && status === 200) {
      // The server ignored the Range: start over from byte 0, with a fresh hash.
      have = 0;
      hash = createHash('sha256');
    }
    if (status === 416 && have === o.size) {
      res.resume();
      break;
    }
    if (status !== 200 && status !== 206) {
      res.resume();
      throw new DownloadError('http_error', `${new URL(o.url).host} answered HTTP ${status} for ${o.dest.split(/[\\/]/).pop()}`);
    }
    if (status === 206 && rangeStart(res) !== have) {
      res.resume();
      throw new DownloadError('http_error', `${new URL(o.url).host} answered a range that does not start at byte ${have}`);
    }
    const sink = new HashingFileSink(part, have > 0, hash, (n) => {
      have += n;
      received += n;
      report();
    });
    // Its error is read by finished() below; a listener keeps it from being thrown as an unhandled event.
    sink.on('error', () => {});
    const startAt = have;
    let over = 0;
    try {
      // Every byte that arrived reaches the disk (and the hash) before a failure is handled, so a resume asks
      // for exactly the rest.
      let failure: unknown;
      try {
        for await (const chunk of res as AsyncIterable<Buffer>) {
          over += chunk.length;
          // More bytes than the repository lists: not the file it describes.
          if (startAt + over > o.size)
            throw new DownloadError('size_mismatch', `${o.dest.split(/[\\/]/).pop()} is larger than the ${o.size} bytes the repository lists`);
          if (!sink.write(chunk)) await once(sink, 'drain');
        }
      } catch (e) {
        failure = e;
        res.destroy();
      }
      sink.end();
      await finished(sink);
      if (failure) throw failure;
    } catch (e) {
      if (e instanceof DownloadError) {
        fs.rmSync(part, { force: true });
        throw e;
      }
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOSPC' || code === 'EDQUOT') throw new DownloadError('no_disk_space', `the disk filled up while writing ${part}`);
      if (code === 'EACCES' || code === 'EROFS' || code === 'EPERM') throw new DownloadError('write_failed', `cannot write ${part}: ${(e as Error).message}`);
      if (abortedError(o.signal)) throw new DownloadError('cancelled', 'the download was cancelled; what arrived is kept and a new download resumes from it');
      // A dropped connection: resume from what is on disk (`have` counts the bytes written; a hash that saw more is
      // made again from the part).
      if (sink.hashAhead) {
        hash = createHash('sha256');
        await hashPrefix(part, have, hash);
      }
      if (attempt >= retries)
        throw new DownloadError(
          'connection_lost',
          `the connection to ${new URL(o.url).host} kept dropping (${retries + 1} tries); run the download again to resume at ${have} bytes`,
        );
      await wait(delay, o.signal);
      delay *= 2;
      continue;
    }
    // A body that ended early without an error is a drop too; the loop asks for the rest.
  }
  report(true);
  return finish(o, part, hash.digest('hex'), have, resumedBytes);
}

function finish(o: FetchFileOptions, part: string, sha256: string, size: number, resumedBytes: number): FetchedFile {
  const name = o.dest.split(/[\\/]/).pop();
  if (size !== o.size) {
    fs.rmSync(part, { force: true });
    throw new DownloadError('size_mismatch', `${name} has ${size} bytes; the repository lists ${o.size}. The file was deleted; nothing was kept.`);
  }
  if (o.sha256 && sha256 !== o.sha256) {
    fs.rmSync(part, { force: true });
    throw new DownloadError(
      'hash_mismatch',
      `${name} does not match the repository's sha256 (expected ${o.sha256.slice(0, 16)}…, got ${sha256.slice(0, 16)}…). The file was deleted and no manifest was written; try again, and if it repeats the repository's copy is damaged.`,
    );
  }
  fs.renameSync(part, o.dest);
  return { sha256, size, resumedBytes, verified: o.sha256 !== '' };
}

function wait(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done(): void {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
