// A stand-in of the Hugging Face Hub's API, written from its documentation (huggingface.co/docs/hub/api,
// "List a repository's files"; the `resolve` download URL): GET /api/models/{repo}/tree/{revision}?recursive=
// → a JSON array of {type, oid, size, path, lfs?: {oid (the sha256), size, pointerSize}}, paged with a
// `Link: <…>; rel="next"` header; GET /{repo}/resolve/{revision}/{path} → 302 to the file on a CDN, which
// serves the bytes with Range. Records every request.
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HubFile {
  path: string;
  bytes: Buffer;
  /** Stored with LFS (large files are): the tree entry carries lfs.oid = sha256. */
  lfs: boolean;
}

export class HfHub {
  readonly hits: string[] = [];
  repos: Record<string, HubFile[]> = {};
  /** Tree entries per page (the Link header pages past it). */
  pageSize = 2;

  private constructor(private readonly server: http.Server) {
    server.on('request', (req, res) => this.handle(req, res));
  }

  static start(): Promise<HfHub> {
    const s = http.createServer();
    const h = new HfHub(s);
    return new Promise((resolve) => s.listen(0, '127.0.0.1', () => resolve(h)));
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const u = new URL(req.url ?? '/', this.url);
    this.hits.push(`${u.pathname}${u.search}`);
    const tree = /^\/api\/models\/([^/]+\/[^/]+)\/tree\/([^/]+)$/.exec(u.pathname);
    if (tree) {
      const files = this.repos[tree[1]!];
      if (!files) return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"Repository not found"}');
      const cursor = Number(u.searchParams.get('cursor') ?? 0);
      const page = files.slice(cursor, cursor + this.pageSize).map((f) => {
        const sha = createHash('sha256').update(f.bytes).digest('hex');
        const gitOid = createHash('sha1').update(`blob ${f.bytes.length}\0`).update(f.bytes).digest('hex');
        return {
          type: 'file',
          oid: gitOid,
          size: f.bytes.length,
          path: f.path,
          ...(f.lfs ? { lfs: { oid: sha, size: f.bytes.length, pointerSize: 134 } } : {}),
        };
      });
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (cursor + this.pageSize < files.length) {
        const next = new URL(u);
        next.searchParams.set('cursor', String(cursor + this.pageSize));
        headers.link = `<${next.href}>; rel="next"`;
      }
      return void res.writeHead(200, headers).end(JSON.stringify(page));
    }
    const resolve = /^\/([^/]+\/[^/]+)\/resolve\/([^/]+)\/(.+)$/.exec(u.pathname);
    if (resolve) {
      const f = this.repos[resolve[1]!]?.find((x) => x.path === decodeURIComponent(resolve[3]!));
      if (!f) return void res.writeHead(404).end('Entry not found');
      return void res.writeHead(302, { location: `/cdn/${resolve[1]}/${resolve[3]}` }).end();
    }
    const cdn = /^\/cdn\/([^/]+\/[^/]+)\/(.+)$/.exec(u.pathname);
    if (cdn) {
      const f = this.repos[cdn[1]!]?.find((x) => x.path === decodeURIComponent(cdn[2]!));
      if (!f) return void res.writeHead(404).end();
      const m = /^bytes=(\d+)-$/.exec(String(req.headers.range ?? ''));
      const start = m ? Number(m[1]) : 0;
      res.writeHead(m ? 206 : 200, {
        'content-length': f.bytes.length - start,
        ...(m ? { 'content-range': `bytes ${start}-${f.bytes.length - 1}/${f.bytes.length}` } : {}),
      });
      return void res.end(f.bytes.subarray(start));
    }
    res.writeHead(404).end();
  }
}
