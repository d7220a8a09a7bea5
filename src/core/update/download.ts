// A release's file for this system, fetched and checked before anything else sees it: the release's
// SHA256SUMS is read first (bounded), the file is streamed to `<name>.part` (0600, in a 0700 folder) while its
// sha256 is computed, never past the size the release declared nor past a hard ceiling, and only a file whose
// sum matches the list is renamed into place. A mismatch, a short or long file, or a failure removes the part.
// Hand-written on node:crypto and fetch (decision 0010): electron-updater checks only its own latest.yml
// sha512s and is Electron-only; the headless agent needs the same check.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { UpdateStateCode } from '../../shared/views/settings';
import type { Resolver } from '../http/address-class';
import { BodyTooLarge, readCapped } from '../http/read-body';
import { fetchCheckingRedirects } from './check';
import { MAX_SIG_BYTES, parseSignature, SIG_ASSET, signedBy, type TrustedKey } from './signing';
import { MAX_SUMS_BYTES, parseSha256Sums, SUMS_ASSET, type ChannelError, type ReleaseAsset } from './github';

/** No release file of this app is larger (the desktop installers are ~150 MB; the npm tarball a few MB). */
export const MAX_UPDATE_BYTES = 1024 * 1024 * 1024;
const DIR_MODE = 0o700;
const FILE_MODE = 0o600;

export type DownloadFailureCode = Extract<
  UpdateStateCode,
  | 'update_checksum_mismatch'
  | 'update_too_large'
  | 'update_no_asset'
  | 'update_no_checksums'
  | 'update_unsigned'
  | 'update_signature_invalid'
  | 'update_download_failed'
>;

export class UpdateDownloadError extends Error {
  constructor(
    readonly code: DownloadFailureCode,
    message: string,
  ) {
    super(message);
    this.name = 'UpdateDownloadError';
  }
}

export interface DownloadOptions {
  asset: ReleaseAsset;
  /** The release's SHA256SUMS asset, and its signature (SHA256SUMS.sig) when the release has one. */
  sums: ReleaseAsset;
  signature?: ReleaseAsset;
  /** The version the release's tag names: a signed list must name this version's file (a signature binds no tag). */
  version?: string;
  /** The release keys trusted here: with any, SHA256SUMS must be signed by one of them. */
  keys?: readonly TrustedKey[];
  /** The folder it goes in (<home>/updates), made 0700. */
  dir: string;
  /** A lower ceiling than MAX_UPDATE_BYTES (tests). */
  maxBytes?: number;
  current: string;
  timeoutMs?: number;
  resolve?: Resolver;
  /** Bytes so far, for a progress figure. */
  progress?: (bytes: number, total: number) => void;
  signal?: AbortSignal;
}

export interface DownloadedFile {
  file: string;
  sha256: string;
  bytes: number;
  signature: 'verified' | 'not_checked';
  signedBy?: string;
}

/** A file name from outside made safe as one path segment. */
export function safeFileName(name: string): string {
  const base = path
    .basename(name)
    .replace(/[^A-Za-z0-9._+-]/g, '_')
    .replace(/^\.+/, '_');
  return base.slice(0, 200) || 'update';
}

async function get(url: string, o: DownloadOptions, accept: string): Promise<Response> {
  const signals = [AbortSignal.timeout(o.timeoutMs ?? 30 * 60_000), ...(o.signal ? [o.signal] : [])];
  let res: Response;
  try {
    res = await fetchCheckingRedirects(url, { headers: { accept, 'user-agent': `swan-provider/${o.current}` }, signal: AbortSignal.any(signals) }, o.resolve);
  } catch (e) {
    const err = e as Error;
    throw new UpdateDownloadError('update_download_failed', `the download did not complete: ${(err.cause as Error | undefined)?.message ?? err.message}`);
  }
  if (!res.ok) {
    await res.body?.cancel();
    throw new UpdateDownloadError(
      'update_download_failed',
      `the release server answered HTTP ${res.status} for ${path.basename(new URL(url).pathname).slice(0, 80)}`,
    );
  }
  return res;
}

/**
 * The sum SHA256SUMS lists for `name`, and whether its signature was checked; throws update_no_checksums when the
 * list or the line is missing, update_unsigned / update_signature_invalid when a trusted key is set and the list
 * is not signed by it.
 */
export async function expectedSum(o: DownloadOptions): Promise<{ sum: string; signature: 'verified' | 'not_checked'; signedBy?: string }> {
  if (o.sums.size > MAX_SUMS_BYTES) throw new UpdateDownloadError('update_no_checksums', `the release's ${SUMS_ASSET} is larger than a checksum list can be`);
  const res = await get(o.sums.url, o, 'text/plain, application/octet-stream;q=0.9');
  let text: string;
  try {
    text = await readCapped(res, MAX_SUMS_BYTES);
  } catch (e) {
    if (e instanceof BodyTooLarge) throw new UpdateDownloadError('update_no_checksums', `the release's ${SUMS_ASSET} is larger than a checksum list can be`);
    throw new UpdateDownloadError('update_download_failed', `${SUMS_ASSET} could not be read: ${(e as Error).message}`);
  }
  let sums: Map<string, string>;
  try {
    sums = parseSha256Sums(text);
  } catch (e) {
    throw new UpdateDownloadError('update_no_checksums', (e as ChannelError).message);
  }
  const sum = sums.get(o.asset.name);
  if (!sum) throw new UpdateDownloadError('update_no_checksums', `the release's ${SUMS_ASSET} has no line for ${o.asset.name.slice(0, 80)}`);
  const keys = o.keys ?? [];
  if (keys.length === 0) return { sum, signature: 'not_checked' };
  if (!o.signature)
    throw new UpdateDownloadError('update_unsigned', `the release's ${SUMS_ASSET} is not signed (no ${SIG_ASSET}), and a release key is set here`);
  let sigText: string;
  try {
    sigText = await readCapped(await get(o.signature.url, o, 'text/plain, application/octet-stream;q=0.9'), MAX_SIG_BYTES);
  } catch (e) {
    if (e instanceof UpdateDownloadError) throw e;
    throw new UpdateDownloadError('update_signature_invalid', `${SIG_ASSET} could not be read: ${(e as Error).message}`);
  }
  const sig = parseSignature(sigText);
  const by = sig ? signedBy(text, sig, keys) : undefined;
  if (!by)
    throw new UpdateDownloadError(
      'update_signature_invalid',
      sig ? `the release's ${SUMS_ASSET} is not signed by a release key trusted here` : `${SIG_ASSET} is not an Ed25519 signature (one line of base64)`,
    );
  // The tag is not signed: an older signed list republished under a newer tag would pass the signature, so the
  // signed file's name must carry the version the tag claims.
  if (o.version && !o.asset.name.includes(o.version))
    throw new UpdateDownloadError('update_signature_invalid', `the signed ${SUMS_ASSET} lists ${o.asset.name.slice(0, 80)}, which is not version ${o.version}`);
  return { sum, signature: 'verified', signedBy: by.id };
}

/** Fetches the asset, checks its sha256 against SHA256SUMS, and leaves it at `<dir>/<name>` (0600). */
export async function downloadVerified(o: DownloadOptions): Promise<DownloadedFile> {
  const ceiling = Math.min(o.maxBytes ?? MAX_UPDATE_BYTES, MAX_UPDATE_BYTES);
  if (o.asset.size > ceiling)
    throw new UpdateDownloadError('update_too_large', `the release file is ${o.asset.size} bytes, over the ${ceiling}-byte limit for an update`);
  const { sum, ...signed } = await expectedSum(o);
  fs.mkdirSync(o.dir, { recursive: true, mode: DIR_MODE });
  fs.chmodSync(o.dir, DIR_MODE);
  const file = path.join(o.dir, safeFileName(o.asset.name));
  const part = `${file}.part`;
  fs.rmSync(part, { force: true });
  // The size GitHub declared is the bound (its `size`), never more than the ceiling; 0 means "not said".
  const limit = o.asset.size > 0 ? o.asset.size : ceiling;
  const res = await get(o.asset.url, o, 'application/octet-stream');
  const declared = Number(res.headers.get('content-length') ?? 0);
  if (declared > limit) {
    await res.body?.cancel();
    throw new UpdateDownloadError('update_too_large', `the server offered ${declared} bytes for a file the release says is ${limit} bytes`);
  }
  const hash = crypto.createHash('sha256');
  const fd = fs.openSync(part, 'w', FILE_MODE);
  let bytes = 0;
  try {
    if (res.body) {
      const reader = res.body.getReader();
      for (;;) {
        let chunk: ReadableStreamReadResult<Uint8Array>;
        try {
          chunk = await reader.read();
        } catch (e) {
          const err = e as Error;
          throw new UpdateDownloadError('update_download_failed', `the download did not complete: ${(err.cause as Error | undefined)?.message ?? err.message}`);
        }
        if (chunk.done) break;
        bytes += chunk.value.byteLength;
        if (bytes > limit) {
          await reader.cancel();
          throw new UpdateDownloadError(
            'update_too_large',
            `the server sent more than the ${limit} bytes the release declared for ${o.asset.name.slice(0, 80)}; the file was removed`,
          );
        }
        hash.update(chunk.value);
        fs.writeSync(fd, chunk.value);
        o.progress?.(bytes, limit);
      }
    }
    fs.fsyncSync(fd);
  } catch (e) {
    fs.closeSync(fd);
    fs.rmSync(part, { force: true });
    if (e instanceof UpdateDownloadError) throw e;
    throw new UpdateDownloadError('update_download_failed', `the file could not be written: ${(e as Error).message}`);
  }
  fs.closeSync(fd);
  const got = hash.digest('hex');
  if (o.asset.size > 0 && bytes !== o.asset.size) {
    fs.rmSync(part, { force: true });
    throw new UpdateDownloadError('update_download_failed', `the download ended after ${bytes} of ${o.asset.size} bytes; the file was removed`);
  }
  if (got !== sum) {
    fs.rmSync(part, { force: true });
    throw new UpdateDownloadError(
      'update_checksum_mismatch',
      `${o.asset.name.slice(0, 80)} does not match the release's ${SUMS_ASSET} (expected ${sum.slice(0, 12)}…, got ${got.slice(0, 12)}…); the file was removed`,
    );
  }
  fs.renameSync(part, file);
  fs.chmodSync(file, FILE_MODE);
  return { file, sha256: got, bytes, ...signed };
}
