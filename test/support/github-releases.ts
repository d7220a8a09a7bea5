// A stand-in of the release channel (decision 0010): GitHub's REST API for one repository's releases, as
// GitHub documents it ("Get the latest release": GET /repos/{owner}/{repo}/releases/latest answers the newest
// published release that is neither a draft nor a pre-release, its `assets[]` with name, size, state and
// browser_download_url; 404 when the repository has none), and the download of an asset as github.com serves
// it: its browser_download_url answers 302 to a storage host, which sends the bytes. On 127.0.0.1, a free port.
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StandInAsset {
  name: string;
  data: Buffer;
  /** Serve these bytes instead of `data` (a tampered file): SHA256SUMS still lists `data`'s sum. */
  served?: Buffer;
  /** The size the API declares (default: data's length). */
  declaredSize?: number;
}

export interface StandInRelease {
  tag: string;
  assets: StandInAsset[];
  /** Publish a SHA256SUMS asset listing every asset (default true). */
  sums?: boolean;
  draft?: boolean;
  prerelease?: boolean;
  /** Publish SHA256SUMS.sig: the Ed25519 signature (base64, one line) of SHA256SUMS by this private key. */
  signWith?: crypto.KeyObject;
}

export const sha256 = (b: Buffer): string => crypto.createHash('sha256').update(b).digest('hex');

export class GithubReleasesStandIn {
  /** The newest release, or undefined (the API answers 404, as for a repository without releases). */
  release?: StandInRelease;
  readonly hits: string[] = [];
  private held?: { promise: Promise<void>; release: () => void };

  private constructor(
    private readonly server: http.Server,
    readonly origin: string,
    readonly owner: string,
    readonly repo: string,
  ) {}

  /** The base URL the agent's update feed is set to: {origin}/repos/{owner}/{repo}. */
  get feed(): string {
    return `${this.origin}/repos/${this.owner}/${this.repo}`;
  }

  static async start(release?: StandInRelease, owner = 'swan-test', repo = 'swan-provider-console'): Promise<GithubReleasesStandIn> {
    const box: { self?: GithubReleasesStandIn } = {};
    const server = http.createServer((req, res) => void box.self!.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const self = (box.self = new GithubReleasesStandIn(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`, owner, repo));
    self.release = release;
    return self;
  }

  /** Asset downloads wait until the returned function is called (a download caught in the middle). */
  holdDownloads(): () => void {
    let release!: () => void;
    const promise = new Promise<void>((r) => (release = r));
    this.held = { promise, release };
    return () => {
      this.held = undefined;
      release();
    };
  }

  close(): Promise<void> {
    this.held?.release();
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }

  private assets(): StandInAsset[] {
    const r = this.release;
    if (!r) return [];
    if (r.sums === false) return r.assets;
    const text = r.assets.map((a) => `${sha256(a.data)}  ${a.name}\n`).join('');
    const sig = r.signWith ? [{ name: 'SHA256SUMS.sig', data: Buffer.from(`${crypto.sign(null, Buffer.from(text), r.signWith).toString('base64')}\n`) }] : [];
    return [...r.assets, { name: 'SHA256SUMS', data: Buffer.from(text) }, ...sig];
  }

  private releaseJson(): unknown {
    const r = this.release!;
    const api = `${this.origin}/repos/${this.owner}/${this.repo}`;
    const at = '2026-12-01T10:00:00Z';
    return {
      url: `${api}/releases/1`,
      html_url: `${this.origin}/${this.owner}/${this.repo}/releases/tag/${r.tag}`,
      assets_url: `${api}/releases/1/assets`,
      upload_url: `${this.origin}/uploads/releases/1/assets{?name,label}`,
      tarball_url: `${api}/tarball/${r.tag}`,
      zipball_url: `${api}/zipball/${r.tag}`,
      id: 1,
      node_id: 'RE_stand_in',
      tag_name: r.tag,
      target_commitish: 'main',
      name: r.tag,
      body: 'Stand-in release.',
      draft: r.draft ?? false,
      prerelease: r.prerelease ?? false,
      created_at: at,
      published_at: at,
      author: { login: this.owner, id: 1, type: 'User' },
      assets: this.assets().map((a, i) => ({
        url: `${api}/releases/assets/${i + 1}`,
        browser_download_url: `${this.origin}/${this.owner}/${this.repo}/releases/download/${r.tag}/${encodeURIComponent(a.name)}`,
        id: i + 1,
        node_id: `RA_${i + 1}`,
        name: a.name,
        label: null,
        state: 'uploaded',
        content_type: 'application/octet-stream',
        size: a.declaredSize ?? a.data.length,
        download_count: 0,
        created_at: at,
        updated_at: at,
        uploader: { login: this.owner, id: 1, type: 'User' },
      })),
    };
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.origin);
    this.hits.push(url.pathname);
    const json = (status: number, body: unknown): void =>
      void res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
    if (url.pathname === `/repos/${this.owner}/${this.repo}/releases/latest`) {
      if (!this.release || this.release.draft || this.release.prerelease)
        return json(404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest/releases/releases#get-the-latest-release', status: '404' });
      return json(200, this.releaseJson());
    }
    const dl = new RegExp(`^/${this.owner}/${this.repo}/releases/download/([^/]+)/([^/]+)$`).exec(url.pathname);
    if (dl && this.release && decodeURIComponent(dl[1]!) === this.release.tag) {
      // github.com sends the bytes from another host: a redirect first, as a real download follows.
      return void res.writeHead(302, { location: `${this.origin}/storage/${dl[2]}` }).end();
    }
    const st = /^\/storage\/([^/]+)$/.exec(url.pathname);
    const asset = st ? this.assets().find((a) => a.name === decodeURIComponent(st[1]!)) : undefined;
    if (asset) {
      if (this.held && asset.name !== 'SHA256SUMS') await this.held.promise;
      const bytes = asset.served ?? asset.data;
      return void res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(bytes);
    }
    json(404, { message: 'Not Found', status: '404' });
  }
}
