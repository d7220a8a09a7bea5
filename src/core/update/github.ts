// The release channel (decision 0010): GitHub Releases of this project's repository, read through GitHub's
// REST API: `GET {base}/releases/latest` answers the newest published release that is neither a draft nor a
// pre-release: `tag_name` (v1.2.3), `html_url`, `draft`, `prerelease`, and `assets[]` ({name, size, state,
// browser_download_url}). Each release carries a `SHA256SUMS` asset: one line per asset, "<sha256>  <name>"
// (sha256sum's output). Everything here is read from outside, so every field is checked and bounded.
import { z } from 'zod';
import { JSON_LIMITS, parseJson } from '../http/bounded-json';
import { httpUrlProblem } from '../http/url-problem';

/** The name of the checksum list a release must carry. */
export const SUMS_ASSET = 'SHA256SUMS';
/** A release lists at most this many assets (GitHub allows 1000): more is not a release of this app. */
const MAX_ASSETS = 1000;
/** A checksum list longer than this is not ours. */
export const MAX_SUMS_BYTES = 256 * 1024;

const assetSchema = z.object({
  name: z.string().min(1).max(255),
  size: z.number().int().nonnegative(),
  state: z.string().max(32).optional(),
  browser_download_url: z.string().min(1).max(2048),
});

const releaseSchema = z.object({
  tag_name: z.string().min(1).max(128),
  html_url: z.string().max(2048).optional(),
  draft: z.boolean().optional(),
  prerelease: z.boolean().optional(),
  assets: z.array(z.unknown()).max(MAX_ASSETS),
});

export interface ReleaseAsset {
  name: string;
  size: number;
  url: string;
}

export interface GithubRelease {
  /** The version the tag names, without its leading v. */
  version: string;
  tag: string;
  page?: string;
  draft: boolean;
  prerelease: boolean;
  /** The assets that are uploaded and have a usable http(s) address; others are left out. */
  assets: ReleaseAsset[];
}

export class ChannelError extends Error {
  constructor(
    readonly code: 'feed_unreadable' | 'bad_version',
    message: string,
  ) {
    super(message);
    this.name = 'ChannelError';
  }
}

const VERSION_TAG = /^v?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?)$/;

/** GitHub's release JSON, checked: throws ChannelError when it is not one. */
export function readGithubRelease(body: string): GithubRelease {
  let raw: unknown;
  try {
    raw = parseJson(body, JSON_LIMITS.platform);
  } catch {
    throw new ChannelError('feed_unreadable', 'the release channel sent JSON that does not parse');
  }
  const r = releaseSchema.safeParse(raw);
  if (!r.success) throw new ChannelError('feed_unreadable', 'the release channel did not answer with a GitHub release (tag_name and assets)');
  const m = VERSION_TAG.exec(r.data.tag_name.trim());
  if (!m) throw new ChannelError('bad_version', `the newest release's tag "${r.data.tag_name.slice(0, 40)}" is not a version like v1.2.3`);
  const assets: ReleaseAsset[] = [];
  for (const a of r.data.assets) {
    const p = assetSchema.safeParse(a);
    if (!p.success) continue;
    if (p.data.state !== undefined && p.data.state !== 'uploaded') continue;
    if (httpUrlProblem(p.data.browser_download_url, { subject: 'An asset', inside: 'an asset URL' })) continue;
    assets.push({ name: p.data.name, size: p.data.size, url: p.data.browser_download_url });
  }
  const page =
    r.data.html_url && !httpUrlProblem(r.data.html_url, { subject: 'The release page', inside: 'the release page URL' }) ? r.data.html_url : undefined;
  return { version: m[1]!, tag: r.data.tag_name, ...(page ? { page } : {}), draft: r.data.draft === true, prerelease: r.data.prerelease === true, assets };
}

/**
 * A SHA256SUMS file: "<64 hex>  <name>" or "<64 hex> *<name>" a line (sha256sum's text and binary forms).
 * Lines that are not one are skipped; a name listed twice with two sums makes the whole list untrusted.
 */
export function parseSha256Sums(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split(/\r?\n/).slice(0, 5000)) {
    const m = /^([0-9a-fA-F]{64}) [ *](.+)$/.exec(line.trim());
    if (!m) continue;
    const name = m[2]!.trim().replace(/^\.\//, '');
    const sum = m[1]!.toLowerCase();
    const before = out.get(name);
    if (before !== undefined && before !== sum)
      throw new ChannelError('feed_unreadable', `${SUMS_ASSET} lists two different checksums for ${name.slice(0, 80)}`);
    out.set(name, sum);
  }
  return out;
}

/** The file a host installs from (electron-builder's artifact names; the headless agent is npm's tarball). */
export function assetFor(
  assets: readonly ReleaseAsset[],
  mode: 'desktop' | 'headless',
  platform: NodeJS.Platform = process.platform,
  arch: string = process.arch,
): ReleaseAsset | undefined {
  const ext = mode === 'headless' ? /\.tgz$/i : platform === 'win32' ? /\.exe$/i : platform === 'darwin' ? /\.dmg$/i : /\.AppImage$/i;
  const candidates = assets.filter((a) => ext.test(a.name) && a.name !== SUMS_ASSET);
  if (candidates.length <= 1) return candidates[0];
  // electron-builder names the architecture: x64 (x86_64 / amd64 in Linux packages), arm64 (aarch64).
  const aliases = arch === 'x64' ? ['x64', 'x86_64', 'amd64'] : arch === 'arm64' ? ['arm64', 'aarch64'] : [arch];
  return candidates.find((a) => aliases.some((al) => new RegExp(`[-_.]${al}[-_.]`, 'i').test(a.name))) ?? candidates[0];
}
