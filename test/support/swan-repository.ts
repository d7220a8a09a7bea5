// A stand-in of the Swan model repository and the platform's demand table, as HUB-PROTOCOL.md and the Go
// provider read them (internal/models/download.go, internal/market/demand.go):
//   GET /api/v1/models/catalog        → {data: {models: [{model_id, name, category, file_count, total_size_bytes}], total}}
//   GET /api/v1/models/{id}/files     → {data: {model_id, files: [{filename, hash, algorithm, size_bytes, url}], total_size_bytes, file_count}}
//   GET /files/{id}/{filename}        → the bytes, with Range (206 + Content-Range, 416 past the end) as RFC 9110 says
//   GET /api/v1/stats/model-demand    → {code: 0, data: {models: [every field the Go DemandEntry reads]}}
// Faults, per test: drop the connection after N bytes (once), serve corrupted bytes, ignore Range (200), a
// bandwidth cap. Records every file request with its Range header.
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RepoFile {
  filename: string;
  bytes: Buffer;
  /** The hash the repository publishes; default: the bytes' real sha256. */
  hash?: string;
}

export interface RepoModel {
  modelId: string;
  name?: string;
  category?: string;
  files: RepoFile[];
}

export interface FileFaults {
  /** Close the socket after this many body bytes, on the next request only. */
  dropAfterBytes?: number;
  /** Flip a byte in what is served (the published hash stays the true one). */
  corrupt?: boolean;
  /** Answer 200 with the whole file even when a Range is asked. */
  ignoreRange?: boolean;
  /** Hold each request's body until release() (a download that can be seen in progress and cancelled). */
  hold?: boolean;
}

export function sha256(b: Buffer): string {
  return createHash('sha256').update(b).digest('hex');
}

/** Deterministic bytes (a model file's stand-in when no GGUF is at hand). */
export function bytesOf(n: number, seed = 1): Buffer {
  const b = Buffer.allocUnsafe(n);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    b[i] = x & 0xff;
  }
  return b;
}

export class SwanRepository {
  readonly fileHits: Array<{ path: string; range?: string }> = [];
  readonly apiHits: string[] = [];
  models: RepoModel[] = [];
  demand: unknown[] = [];
  faults: FileFaults = {};
  private released?: () => void;
  private held?: Promise<void>;

  private constructor(private readonly server: http.Server) {
    server.on('request', (req, res) => this.handle(req, res));
  }

  static start(): Promise<SwanRepository> {
    const server = http.createServer();
    const r = new SwanRepository(server);
    return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(r)));
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Lets held file bodies go. */
  release(): void {
    this.released?.();
    this.held = undefined;
  }

  close(): Promise<void> {
    this.release();
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private json(res: http.ServerResponse, status: number, body: unknown): void {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const u = new URL(req.url ?? '/', 'http://x');
    const p = u.pathname;
    if (p.startsWith('/files/')) return void this.serveFile(p, req, res);
    this.apiHits.push(p);
    if (p === '/api/v1/models/catalog') {
      return this.json(res, 200, {
        code: 0,
        data: {
          models: this.models.map((m) => ({
            model_id: m.modelId,
            name: m.name ?? m.modelId,
            category: m.category ?? 'text-generation',
            file_count: m.files.length,
            total_size_bytes: m.files.reduce((s, f) => s + f.bytes.length, 0),
          })),
          total: this.models.length,
        },
      });
    }
    if (p === '/api/v1/stats/model-demand') return this.json(res, 200, { code: 0, data: { models: this.demand } });
    const m = /^\/api\/v1\/models\/([^/]+)\/files$/.exec(p);
    if (m) {
      const id = decodeURIComponent(m[1]!);
      const model = this.models.find((x) => x.modelId === id);
      if (!model) return this.json(res, 404, { code: 404, message: 'model not found' });
      return this.json(res, 200, {
        code: 0,
        data: {
          model_id: id,
          files: model.files.map((f) => ({
            filename: f.filename,
            hash: f.hash ?? sha256(f.bytes),
            algorithm: 'sha256',
            size_bytes: f.bytes.length,
            url: `${this.url}/files/${encodeURIComponent(id)}/${f.filename.split('/').map(encodeURIComponent).join('/')}`,
          })),
          total_size_bytes: model.files.reduce((s, f) => s + f.bytes.length, 0),
          file_count: model.files.length,
        },
      });
    }
    this.json(res, 404, { code: 404, message: 'not found' });
  }

  private async serveFile(p: string, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    this.fileHits.push({ path: p, ...(req.headers.range ? { range: req.headers.range } : {}) });
    const [, , idEnc, ...rest] = p.split('/');
    const id = decodeURIComponent(idEnc ?? '');
    const filename = rest.map(decodeURIComponent).join('/');
    const f = this.models.find((m) => m.modelId === id)?.files.find((x) => x.filename === filename);
    if (!f) return this.json(res, 404, { message: 'no such file' });
    let body = f.bytes;
    if (this.faults.corrupt) {
      body = Buffer.from(body);
      body[body.length >> 1] = body[body.length >> 1]! ^ 0xff;
    }
    let start = 0;
    const range = /^bytes=(\d+)-(\d*)$/.exec(String(req.headers.range ?? ''));
    if (range && !this.faults.ignoreRange) {
      start = Number(range[1]);
      if (start >= body.length) return void res.writeHead(416, { 'content-range': `bytes */${body.length}` }).end();
      // A closed range (a GGUF header read by byte ranges) ends where it asks, or at the end of the file.
      if (range[2]) body = body.subarray(0, Math.min(body.length, Number(range[2]) + 1));
      const full = f.bytes.length;
      res.writeHead(206, {
        'content-type': 'application/octet-stream',
        'content-length': body.length - start,
        'content-range': `bytes ${start}-${body.length - 1}/${full}`,
        'accept-ranges': 'bytes',
      });
    } else {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': body.length, 'accept-ranges': 'bytes' });
    }
    if (this.faults.hold) {
      this.held ??= new Promise((resolve) => (this.released = resolve));
      // The headers and a first slice go out, so the download is seen running while held.
      const first = Math.min(64 * 1024, body.length - start);
      res.write(body.subarray(start, start + first));
      start += first;
      // A file that fitted in the first slice is done: only the rest of a larger one waits.
      if (start < body.length) await this.held;
    }
    const drop = this.faults.dropAfterBytes;
    if (drop !== undefined) {
      this.faults.dropAfterBytes = undefined;
      // The socket is ended (not reset) once the slice is out: the client gets every byte sent, then a short body.
      res.write(body.subarray(start, start + drop), () => res.socket?.end());
      return;
    }
    res.end(body.subarray(start));
  }
}
