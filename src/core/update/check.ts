// The update check: asks the release channel which version is newest and says whether it is newer than ours.
// It never downloads anything (download.ts does, checked against the release's SHA256SUMS). Three shapes:
// - the release channel (decision 0010, the default): GitHub Releases of this project through GitHub's REST
//   API, `{base}/releases/latest` where base is https://api.github.com/repos/<owner>/<repo> or any URL of
//   that shape (an owner's mirror, a stand-in in tests; GitHub Enterprise's /api/v3/repos/… too);
// - npm registry metadata (a URL the owner sets), `dist-tags.latest`;
// - an electron-builder "generic" feed (a folder holding latest.yml / latest-mac.yml / latest-linux.yml),
//   its `version:` line — what electron-updater's generic provider reads, checked here over plain HTTP.
import type { UpdateCheckView } from '../../shared/views/settings';
import { httpUrlProblem } from '../http/url-problem';
import { classifyHost, type Resolver } from '../http/address-class';
import { BodyTooLarge, readCapped } from '../http/read-body';
import { JSON_LIMITS, parseJson } from '../http/bounded-json';
import { assetFor, ChannelError, readGithubRelease, SUMS_ASSET, type GithubRelease } from './github';

export const PACKAGE_NAME = 'swan-provider-console';
/** The project's repository on GitHub, whose Releases are the channel (decision 0010). */
export const RELEASE_REPOSITORY = 'swanchain/swan-provider-console';
export const DEFAULT_FEED = `https://api.github.com/repos/${RELEASE_REPOSITORY}`;
const MAX_BYTES = 4 * 1024 * 1024;

/** An error message for a feed URL, or undefined when it is fine ('' = the default feed). */
export function feedUrlProblem(raw: string): string | undefined {
  return httpUrlProblem(raw, { subject: 'The update feed', inside: 'the update feed URL' });
}

/** The file a generic feed folder holds for this platform (electron-builder's names). */
export function genericChannelFile(platform: NodeJS.Platform = process.platform): string {
  return platform === 'darwin' ? 'latest-mac.yml' : platform === 'linux' ? 'latest-linux.yml' : 'latest.yml';
}

/** A GitHub REST API repository URL (…/repos/<owner>/<repo>, or its …/releases/latest): the release channel's shape. */
export function isGithubFeed(feed: string): boolean {
  if (feed === '' || feed === DEFAULT_FEED) return true;
  try {
    return /^(?:\/api\/v3)?\/repos\/[^/]+\/[^/]+(?:\/releases\/latest)?\/?$/.test(new URL(feed).pathname);
  } catch {
    return false;
  }
}

/** Where to ask: the channel's latest release; a .json/.yml URL as given; a folder URL (desktop generic feed) gets the channel file. */
export function feedRequestUrl(feed: string, mode: 'desktop' | 'headless', platform: NodeJS.Platform = process.platform): string {
  if (isGithubFeed(feed)) {
    const u = new URL(feed || DEFAULT_FEED);
    u.pathname = `${u.pathname.replace(/\/+$/, '').replace(/\/releases\/latest$/, '')}/releases/latest`;
    u.search = '';
    u.hash = '';
    return u.href;
  }
  if (mode === 'headless' || /\.(ya?ml|json)$/i.test(new URL(feed).pathname)) return feed;
  return `${feed.replace(/\/+$/, '')}/${genericChannelFile(platform)}`;
}

/** Why an update check failed: see UpdateCheckView.errorCode. */
export type UpdateCheckErrorCode = NonNullable<UpdateCheckView['errorCode']>;

/** A feed problem with its code; the message is the owner's. */
export class FeedError extends Error {
  constructor(
    readonly code: UpdateCheckErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'FeedError';
  }
}

const SEMVER = /^v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/;

/** Compares two semantic versions: < 0 when a is older. Throws on a version it cannot read. */
export function compareVersions(a: string, b: string): number {
  const pa = SEMVER.exec(a.trim());
  const pb = SEMVER.exec(b.trim());
  if (!pa || !pb) throw new FeedError('bad_version', `"${(pa ? b : a).slice(0, 40)}" is not a version number like 1.2.3`);
  for (let i = 1; i <= 3; i++) {
    const d = Number(pa[i]) - Number(pb[i]);
    if (d !== 0) return d;
  }
  // A pre-release (1.0.0-beta) is older than its release.
  if (pa[4] === pb[4]) return 0;
  if (pa[4] === undefined) return 1;
  if (pb[4] === undefined) return -1;
  return pa[4] < pb[4] ? -1 : 1;
}

/** The newest version a feed body names. */
export function latestFromFeed(body: string): string {
  const text = body.trim();
  if (text.startsWith('{')) {
    let j: unknown;
    try {
      j = parseJson(text, JSON_LIMITS.platform);
    } catch {
      throw new FeedError('feed_unreadable', 'the feed sent JSON that does not parse');
    }
    const o = j as { 'dist-tags'?: { latest?: unknown }; version?: unknown };
    const v = o['dist-tags']?.latest ?? o.version;
    if (typeof v !== 'string') throw new FeedError('feed_unreadable', 'the feed names no latest version (no "dist-tags.latest" or "version")');
    compareVersions(v, v);
    return v;
  }
  const m = /^version:\s*['"]?([^'"\s#]+)['"]?\s*(?:#.*)?$/m.exec(text);
  if (!m) throw new FeedError('feed_unreadable', 'the feed is neither npm metadata nor a latest.yml with a "version:" line');
  compareVersions(m[1]!, m[1]!);
  return m[1]!;
}

export interface CheckOptions {
  current: string;
  feed: string; // '' = default
  mode: 'desktop' | 'headless';
  timeoutMs?: number;
  /** Name resolution for the address check of every hop (tests); the system's by default. */
  resolve?: Resolver;
}

/** Redirects followed at most (a GitHub release asset takes two). */
const MAX_REDIRECTS = 5;

/**
 * GET that follows a redirect only to an address checked as the feed's own was: an http(s) URL without
 * credentials, whose host (resolved first) is not link-local, cloud metadata or unspecified. A feed that
 * redirects to 169.254.169.254 is refused (feed_refused_address), never asked.
 */
export async function fetchCheckingRedirects(url: string, init: RequestInit, resolve?: Resolver): Promise<Response> {
  let current = url;
  for (let hop = 0; ; hop++) {
    if (feedUrlProblem(current) || (await classifyHost(new URL(current).hostname, resolve)) === 'refused') {
      throw new FeedError(
        'feed_refused_address',
        hop === 0 ? 'the feed address is one the agent never sends requests to' : 'the feed redirected to an address the agent never sends requests to',
      );
    }
    const res = await fetch(current, { ...init, redirect: 'manual' });
    const location = res.status >= 300 && res.status < 400 ? res.headers.get('location') : null;
    if (location === null) return res;
    await res.body?.cancel();
    if (hop >= MAX_REDIRECTS) throw new FeedError('feed_http_error', `the feed redirected more than ${MAX_REDIRECTS} times`);
    try {
      current = new URL(location, current).href;
    } catch {
      throw new FeedError('feed_http_error', 'the feed redirected to something that is not an address');
    }
  }
}

/** What a check found: the view the owner sees, and on the release channel the release it read (for the download). */
export interface CheckResult {
  view: UpdateCheckView;
  release?: GithubRelease;
}

export async function checkForUpdate(o: CheckOptions): Promise<UpdateCheckView> {
  return (await checkRelease(o)).view;
}

export async function checkRelease(o: CheckOptions): Promise<CheckResult> {
  const feed = o.feed || DEFAULT_FEED;
  const github = isGithubFeed(feed);
  const channel: UpdateCheckView['channel'] = github ? 'github' : /registry\.npmjs\.org$/i.test(safeHost(feed)) || /\.json$/i.test(feed) ? 'npm' : 'generic';
  const base = { current: o.current, feed, channel, checkedAt: Date.now(), available: false };
  try {
    const url = feedRequestUrl(feed, o.mode);
    const res = await fetchCheckingRedirects(
      url,
      {
        headers: github
          ? { accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28', 'user-agent': `swan-provider/${o.current}` }
          : { accept: 'application/vnd.npm.install-v1+json, application/json;q=0.9, text/yaml;q=0.8, */*;q=0.1', 'user-agent': `swan-provider/${o.current}` },
        signal: AbortSignal.timeout(o.timeoutMs ?? 8000),
      },
      o.resolve,
    );
    if (!res.ok) {
      await res.body?.cancel();
      if (res.status === 404)
        throw new FeedError(
          'feed_not_found',
          github ? `the repository has no published release (HTTP 404 at ${url})` : `the feed has no such package or file (HTTP 404 at ${url})`,
        );
      if (github && (res.status === 403 || res.status === 429))
        throw new FeedError('feed_http_error', `GitHub answered HTTP ${res.status}: its limit of unauthenticated requests per hour was reached`);
      throw new FeedError('feed_http_error', `the feed answered HTTP ${res.status}`);
    }
    let body: string;
    try {
      body = await readCapped(res, MAX_BYTES);
    } catch (e) {
      if (e instanceof BodyTooLarge) throw new FeedError('feed_too_large', 'the feed answer is too large');
      throw e;
    }
    if (github) {
      let release: GithubRelease;
      try {
        release = readGithubRelease(body);
      } catch (e) {
        if (e instanceof ChannelError) throw new FeedError(e.code, e.message);
        throw e;
      }
      // /releases/latest never answers a draft or a pre-release; a stand-in or mirror that does is not followed.
      if (release.draft || release.prerelease)
        throw new FeedError('feed_unreadable', `the channel's latest release ${release.tag.slice(0, 40)} is a draft or a pre-release`);
      const asset = assetFor(release.assets, o.mode);
      const available = compareVersions(release.version, o.current) > 0;
      const view: UpdateCheckView = {
        ...base,
        latest: release.version,
        available,
        code: available ? 'update_available' : 'update_up_to_date',
        release: {
          tag: release.tag,
          ...(release.page ? { page: release.page } : {}),
          ...(asset ? { asset: { name: asset.name, size: asset.size } } : {}),
          checksums: release.assets.some((a) => a.name === SUMS_ASSET),
        },
      };
      return { view, release };
    }
    const latest = latestFromFeed(body);
    const available = compareVersions(latest, o.current) > 0;
    return { view: { ...base, latest, available, code: available ? 'update_available' : 'update_up_to_date' } };
  } catch (e) {
    const err = e as Error;
    const timeout = err.name === 'TimeoutError';
    const why = timeout ? 'the feed did not answer in time' : ((err.cause as Error | undefined)?.message ?? err.message);
    const errorCode: UpdateCheckErrorCode = err instanceof FeedError ? err.code : timeout ? 'feed_timeout' : 'feed_unreachable';
    return {
      view: {
        ...base,
        code: 'update_check_failed',
        error: `Could not check for updates: ${why}. Check the feed address in Settings or try again later.`,
        errorCode,
      },
    };
  }
}

function safeHost(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return '';
  }
}

/**
 * The folder an electron-updater generic provider should read, or undefined when the feed is not one
 * (empty = npm's metadata, or a .json URL): the desktop app then keeps the plain check above.
 * A URL naming a latest*.yml file gives that file's folder.
 */
export function genericFeedFolder(feed: string): string | undefined {
  if (feed === '' || feed === DEFAULT_FEED || isGithubFeed(feed) || feedUrlProblem(feed)) return undefined;
  const u = new URL(feed);
  if (/\.json$/i.test(u.pathname) || u.hostname === 'registry.npmjs.org') return undefined;
  u.pathname = u.pathname.replace(/\/latest[^/]*\.ya?ml$/i, '/');
  u.search = '';
  u.hash = '';
  return u.href.endsWith('/') ? u.href : `${u.href}/`;
}
