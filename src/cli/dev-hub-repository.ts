// The dev hub's Swan model repository (`dev-hub --repository <dir>`), served from a local folder in the shapes
// the client reads (src/core/downloads/repository.ts) and test/support/swan-repository.ts stands in for:
//   GET /api/v1/models/catalog     → {code: 0, data: {models: [{model_id, name, category, file_count, total_size_bytes}], total}}
//   GET /api/v1/models/{id}/files  → {code: 0, data: {model_id, files: [{filename, hash, algorithm, size_bytes, url}],
//                                    total_size_bytes, file_count}}; 404 {code: 404, message} for an unknown id
//   GET /files/{id}/{filename}     → the bytes, with Range (206 + Content-Range; 416 past the end), from disk
// The folder is <dir>/<org>/<name>/<files…>: the id is "<org>/<name>"; names starting with "." are skipped at
// every level. It is read and hashed once at start (a folder that cannot be read refuses the start); a file is
// served only when its id and filename are in that list, never from a path built out of the request.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import type http from 'node:http';
import path from 'node:path';
import { pipeline, Transform } from 'node:stream';
import { safeRelativePath } from '../core/downloads/repository';

/** What one start reads at most: a folder larger than this is refused, not cut short. */
export const REPOSITORY_LIMITS = { models: 200, filesPerModel: 1000, depth: 8 } as const;

interface ServedFile {
  /** Relative to the model folder, "/"-separated: what the client writes under its own model folder. */
  filename: string;
  abs: string;
  size: number;
  sha256: string;
}

interface ServedModel {
  id: string;
  name: string;
  files: ServedFile[];
  byName: Map<string, ServedFile>;
  totalBytes: number;
}

/** One line a person reads; no `code`, so the dev-hub command does not take it for a listen error. */
function unreadable(p: string, e: unknown): Error {
  const err = e as NodeJS.ErrnoException;
  return new Error(`the model repository cannot be read: ${p} (${err.code ?? err.message})`);
}

async function sha256Of(file: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of fs.createReadStream(file, { highWaterMark: 4 << 20 })) h.update(chunk as Buffer);
  return h.digest('hex');
}

async function entries(dir: string): Promise<fs.Dirent[]> {
  try {
    const list = await fs.promises.readdir(dir, { withFileTypes: true });
    return list.filter((d) => !d.name.startsWith('.')).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  } catch (e) {
    throw unreadable(dir, e);
  }
}

/** A directory entry's kind, a symlink followed (a developer may link a large file in rather than copy it). */
async function kindOf(p: string, d: fs.Dirent): Promise<'dir' | 'file' | 'other'> {
  if (d.isDirectory()) return 'dir';
  if (d.isFile()) return 'file';
  if (!d.isSymbolicLink()) return 'other';
  try {
    const st = await fs.promises.stat(p);
    return st.isDirectory() ? 'dir' : st.isFile() ? 'file' : 'other';
  } catch (e) {
    throw unreadable(p, e);
  }
}

/** `bytes=a-b`, `bytes=a-`, `bytes=-n` as [start, end] inclusive; 'unsatisfiable' past the end; undefined: answer the whole file. */
export function byteRange(header: string | undefined, size: number): [number, number] | 'unsatisfiable' | undefined {
  const m = /^bytes=(\d*)-(\d*)$/.exec((header ?? '').trim());
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  const a = m[1] === '' ? undefined : Number(m[1]);
  const b = m[2] === '' ? undefined : Number(m[2]);
  if ((a !== undefined && !Number.isSafeInteger(a)) || (b !== undefined && !Number.isSafeInteger(b))) return undefined;
  if (a === undefined) {
    // A suffix: the last b bytes.
    if (b === 0 || size === 0) return 'unsatisfiable';
    return [Math.max(0, size - b!), size - 1];
  }
  // RFC 9110 §14.1.1: a last position before the first makes the range invalid, and an invalid Range is ignored.
  if (b !== undefined && b < a) return undefined;
  if (a >= size) return 'unsatisfiable';
  return [a, Math.min(b ?? size - 1, size - 1)];
}

/** The file list's URLs on the address the request came on: its Host when it is a plain host[:port], else the socket's own address. */
function baseUrl(req: http.IncomingMessage): string {
  const host = req.headers.host ?? '';
  if (/^([A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:.]+\])(:\d{1,5})?$/.test(host)) return `http://${host}`;
  const addr = req.socket.localAddress ?? '127.0.0.1';
  return `http://${addr.includes(':') ? `[${addr}]` : addr}:${req.socket.localPort}`;
}

export class DevRepository {
  private readonly byId: Map<string, ServedModel>;

  private constructor(
    readonly dir: string,
    private readonly models: ServedModel[],
    /** Bytes a second each file response is held to (a slow network, to watch a download run); 0: as fast as it goes. */
    private readonly rateBytesPerSec = 0,
  ) {
    this.byId = new Map(models.map((m) => [m.id, m]));
  }

  /** Reads `<dir>/<org>/<name>/…` and hashes every file (streamed). Rejects with one line on a folder that cannot be read or is over the limits. */
  static async load(dir: string, o: { rateBytesPerSec?: number } = {}): Promise<DevRepository> {
    const root = path.resolve(dir);
    const models: ServedModel[] = [];
    for (const org of await entries(root)) {
      const orgDir = path.join(root, org.name);
      if ((await kindOf(orgDir, org)) !== 'dir') continue;
      for (const name of await entries(orgDir)) {
        const modelDir = path.join(orgDir, name.name);
        if ((await kindOf(modelDir, name)) !== 'dir') continue;
        const id = `${org.name}/${name.name}`;
        const found: Array<{ filename: string; abs: string }> = [];
        await walk(modelDir, '', 0, id, found);
        // An empty folder is no model: the client refuses a file list with nothing in it.
        if (found.length === 0) continue;
        if (models.length >= REPOSITORY_LIMITS.models)
          throw new Error(`the model repository ${root} holds more than ${REPOSITORY_LIMITS.models} models; give the dev hub a smaller folder`);
        const files: ServedFile[] = [];
        for (const f of found) {
          try {
            const size = (await fs.promises.stat(f.abs)).size;
            files.push({ ...f, size, sha256: await sha256Of(f.abs) });
          } catch (e) {
            throw unreadable(f.abs, e);
          }
        }
        models.push({ id, name: name.name, files, byName: new Map(files.map((f) => [f.filename, f])), totalBytes: files.reduce((s, f) => s + f.size, 0) });
      }
    }
    return new DevRepository(root, models, o.rateBytesPerSec ?? 0);
  }

  get modelCount(): number {
    return this.models.length;
  }

  ids(): string[] {
    return this.models.map((m) => m.id);
  }

  /**
   * A model-demand row per model, so `models recommend` has a figure for it. Simulated (the dev hub is a simulated
   * network), and consistent with itself: 4.5 M tokens in and 1.5 M out a day at the list prices make revenue_24h;
   * at the provider prices, what one provider (nobody serves it yet: an entrant takes it all) would earn.
   */
  demandRows(): Array<{ model_id: string } & Record<string, unknown>> {
    return this.models.map((m) => ({
      model_id: m.id,
      model_name: `${m.name} (dev hub repository, simulated demand)`,
      category: 'text-generation',
      tier: 'small',
      input_price: 0.1,
      output_price: 0.2,
      provider_input_price: 0.08,
      provider_output_price: 0.16,
      online_providers: 0,
      requests_24h: 1200,
      tokens_24h: 6_000_000,
      revenue_24h: 0.75,
      demand_trend: 'rising',
      demand_change_pct: 15,
      // Unknown to the network: recommend estimates the memory from the model's own files.
      min_vram_gb: 0,
      vram_known: false,
      est_daily_earnings: 0.6,
      est_entrant_daily_earnings: 0.6,
      entrant_basis: 'simulated (dev hub repository)',
      plan_covered: false,
      subscription_share: 0,
      long_context_share: 0.05,
      context_length: 8192,
      prompt_tokens_p50: 2500,
      prompt_tokens_p95: 5000,
      prompt_tokens_max: 7000,
      total_tokens_p95: 6000,
    }));
  }

  /** Answers a repository route; false when `route` is not one. */
  handle(route: string, url: URL, req: http.IncomingMessage, res: http.ServerResponse): boolean {
    const json = (status: number, body: unknown): void => {
      const text = JSON.stringify(body);
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
    };
    if (route === 'GET /api/v1/models/catalog') {
      json(200, {
        code: 0,
        data: {
          models: this.models.map((m) => ({
            model_id: m.id,
            name: m.name,
            category: 'text-generation',
            file_count: m.files.length,
            total_size_bytes: m.totalBytes,
          })),
          total: this.models.length,
        },
      });
      return true;
    }
    const list = req.method === 'GET' ? /^\/api\/v1\/models\/(.+)\/files$/.exec(url.pathname) : null;
    if (list) {
      const m = this.byId.get(decode(list[1]!) ?? '');
      if (!m) {
        json(404, { code: 404, message: 'model not found in the dev hub repository' });
        return true;
      }
      const base = baseUrl(req);
      json(200, {
        code: 0,
        data: {
          model_id: m.id,
          files: m.files.map((f) => ({
            filename: f.filename,
            hash: f.sha256,
            algorithm: 'sha256',
            size_bytes: f.size,
            // The id is one path segment (its "/" escaped), as the client's own URLs have it.
            url: `${base}/files/${encodeURIComponent(m.id)}/${f.filename.split('/').map(encodeURIComponent).join('/')}`,
          })),
          total_size_bytes: m.totalBytes,
          file_count: m.files.length,
        },
      });
      return true;
    }
    const file = req.method === 'GET' || req.method === 'HEAD' ? /^\/files\/([^/]+)\/(.+)$/.exec(url.pathname) : null;
    if (file) {
      // Looked up in what was read at start: "..", an absolute path or another model's id is simply not there.
      const id = decode(file[1]!);
      const segments = file[2]!.split('/').map(decode);
      const f = id === undefined || segments.includes(undefined) ? undefined : this.byId.get(id)?.byName.get(segments.join('/'));
      if (!f) json(404, { code: 404, message: 'no such file in the dev hub repository' });
      else this.serve(f, req, res);
      return true;
    }
    return false;
  }

  private serve(f: ServedFile, req: http.IncomingMessage, res: http.ServerResponse): void {
    const range = byteRange(req.headers.range, f.size);
    if (range === 'unsatisfiable') {
      res.writeHead(416, { 'content-range': `bytes */${f.size}`, 'accept-ranges': 'bytes', 'content-length': 0 }).end();
      return;
    }
    const [start, end] = range ?? [0, f.size - 1];
    const headers: http.OutgoingHttpHeaders = { 'content-type': 'application/octet-stream', 'content-length': end - start + 1, 'accept-ranges': 'bytes' };
    if (range) headers['content-range'] = `bytes ${start}-${end}/${f.size}`;
    res.writeHead(range ? 206 : 200, headers);
    if (req.method === 'HEAD' || end < start) {
      res.end();
      return;
    }
    // A file removed or cut since the start ends the response early: the client's length and sha256 checks see it.
    const body = fs.createReadStream(f.abs, { start, end });
    if (this.rateBytesPerSec > 0) pipeline(body, throttle(this.rateBytesPerSec), res, () => {});
    else pipeline(body, res, () => {});
  }
}

/** Collects the files under a model folder, dot-names skipped, within the limits. */
async function walk(dir: string, rel: string, depth: number, id: string, out: Array<{ filename: string; abs: string }>): Promise<void> {
  for (const d of await entries(dir)) {
    const abs = path.join(dir, d.name);
    const name = rel ? `${rel}/${d.name}` : d.name;
    const kind = await kindOf(abs, d);
    if (kind === 'dir') {
      if (depth + 1 >= REPOSITORY_LIMITS.depth)
        throw new Error(`the model repository's ${id} nests folders deeper than ${REPOSITORY_LIMITS.depth} levels (${abs})`);
      await walk(abs, name, depth + 1, id, out);
    } else if (kind === 'file') {
      // The client refuses a whole file list with one name it would not write (a backslash): say so now.
      if (safeRelativePath(name) !== name) throw new Error(`the model repository's ${id} has a file the client cannot take: ${abs}`);
      if (out.length >= REPOSITORY_LIMITS.filesPerModel)
        throw new Error(`the model repository's ${id} holds more than ${REPOSITORY_LIMITS.filesPerModel} files`);
      out.push({ filename: name, abs });
    }
  }
}

function decode(s: string): string | undefined {
  try {
    return decodeURIComponent(s);
  } catch {
    return undefined;
  }
}

/** Passes bytes on no faster than `rate` a second (each chunk waits until the bytes before it are due). */
export function throttle(rate: number): Transform {
  const t0 = performance.now();
  let sent = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      sent += chunk.length;
      const wait = (sent / rate) * 1000 - (performance.now() - t0);
      if (wait <= 0) done(null, chunk);
      else setTimeout(() => done(null, chunk), wait);
    },
  });
}
