// The update check: asks a feed which version is newest and says whether it is newer than ours.
// It never downloads or installs anything; the owner decides. Two feed shapes are read:
// - npm registry metadata (the default: https://registry.npmjs.org/<package>), `dist-tags.latest`;
// - an electron-builder "generic" feed (a folder holding latest.yml / latest-mac.yml / latest-linux.yml),
//   its `version:` line — what electron-updater's generic provider reads, checked here over plain HTTP.
import type { UpdateCheckView } from '../../shared/views/settings';
import { httpUrlProblem } from '../http/url-problem';
import { classifyHost, type Resolver } from '../http/address-class';
import { BodyTooLarge, readCapped } from '../http/read-body';
import { JSON_LIMITS, parseJson } from '../http/bounded-json';

export const PACKAGE_NAME = 'swan-provider-console';
export const DEFAULT_FEED = `https://registry.npmjs.org/${PACKAGE_NAME}`;
const MAX_BYTES = 4 * 1024 * 1024;

/** An error message for a feed URL, or undefined when it is fine ('' = the default feed). */
export function feedUrlProblem(raw: string): string | undefined {
  return httpUrlProblem(raw, { subject: 'The update feed', inside: 'the update feed URL' });
}

/** The file a generic feed folder holds for this platform (electron-builder's names). */
export function genericChannelFile(platform: NodeJS.Platform = process.platform): string {
  return platform === 'darwin' ? 'latest-mac.yml' : platform === 'linux' ? 'latest-linux.yml' : 'latest.yml';
}

/** Where to ask: a .json/.yml URL as given; a folder URL (desktop generic feed) gets the channel file. */
export function feedRequestUrl(feed: string, mode: 'desktop' | 'headless', platform: NodeJS.Platform = process.platform): string {
  if (feed === DEFAULT_FEED || mode === 'headless' || /\.(ya?ml|json)$/i.test(new URL(feed).pathname)) return feed;
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
async function fetchCheckingRedirects(url: string, init: RequestInit, resolve?: Resolver): Promise<Response> {
  let current = url;
  for (let hop = 0; ; hop++) {
    if (feedUrlProblem(current) || (await classifyHost(new URL(current).hostname, resolve)) === 'refused') {
      throw new FeedError('feed_refused_address', hop === 0 ? 'the feed address is one the agent never sends requests to' : 'the feed redirected to an address the agent never sends requests to');
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

export async function checkForUpdate(o: CheckOptions): Promise<UpdateCheckView> {
  const feed = o.feed || DEFAULT_FEED;
  const base = { current: o.current, feed, checkedAt: Date.now(), available: false };
  try {
    const url = feedRequestUrl(feed, o.mode);
    const res = await fetchCheckingRedirects(url, {
      headers: { accept: 'application/vnd.npm.install-v1+json, application/json;q=0.9, text/yaml;q=0.8, */*;q=0.1', 'user-agent': `swan-provider/${o.current}` },
      signal: AbortSignal.timeout(o.timeoutMs ?? 8000),
    }, o.resolve);
    if (!res.ok) {
      await res.body?.cancel();
      throw res.status === 404
        ? new FeedError('feed_not_found', `the feed has no such package or file (HTTP 404 at ${url})`)
        : new FeedError('feed_http_error', `the feed answered HTTP ${res.status}`);
    }
    let body: string;
    try {
      body = await readCapped(res, MAX_BYTES);
    } catch (e) {
      if (e instanceof BodyTooLarge) throw new FeedError('feed_too_large', 'the feed answer is too large');
      throw e;
    }
    const latest = latestFromFeed(body);
    return { ...base, latest, available: compareVersions(latest, o.current) > 0 };
  } catch (e) {
    const err = e as Error;
    const timeout = err.name === 'TimeoutError';
    const why = timeout ? 'the feed did not answer in time' : ((err.cause as Error | undefined)?.message ?? err.message);
    const errorCode: UpdateCheckErrorCode = err instanceof FeedError ? err.code : timeout ? 'feed_timeout' : 'feed_unreachable';
    return { ...base, error: `Could not check for updates: ${why}. Check the feed address in Settings or try again later.`, errorCode };
  }
}

/**
 * The folder an electron-updater generic provider should read, or undefined when the feed is not one
 * (empty = npm's metadata, or a .json URL): the desktop app then keeps the plain check above.
 * A URL naming a latest*.yml file gives that file's folder.
 */
export function genericFeedFolder(feed: string): string | undefined {
  if (feed === '' || feed === DEFAULT_FEED || feedUrlProblem(feed)) return undefined;
  const u = new URL(feed);
  if (/\.json$/i.test(u.pathname) || u.hostname === 'registry.npmjs.org') return undefined;
  u.pathname = u.pathname.replace(/\/latest[^/]*\.ya?ml$/i, '/');
  u.search = '';
  u.hash = '';
  return u.href.endsWith('/') ? u.href : `${u.href}/`;
}
