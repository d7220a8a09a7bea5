// Signed checksum lists (decision 0010): a release may carry `SHA256SUMS.sig`, one line of base64, the Ed25519
// signature over SHA256SUMS exactly as published. With a trusted key configured, a release must carry it and it
// must verify, or nothing is downloaded: the list is then as trustworthy as the key, not as the account that
// uploaded it. Keys are written "ed25519:<base64 of the 32-byte public key>"; node:crypto verifies (no library).
import crypto from 'node:crypto';

/** The signature asset beside SHA256SUMS. */
export const SIG_ASSET = 'SHA256SUMS.sig';
/** A signature line is 88 characters; anything much longer is not one. */
export const MAX_SIG_BYTES = 1024;

/**
 * The project's own release keys. Empty until the project signs its first release (its key is then added here,
 * its private half kept by the release maintainers, never in this repository); until then only keys the owner
 * configures ([Agent] ReleaseSigningKeys) are checked, and a download says its signature was not checked.
 */
export const PROJECT_RELEASE_KEYS: readonly string[] = [];

/** The DER prefix of an Ed25519 public key in SPKI form (RFC 8410): the 32 raw bytes follow it. */
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

export interface TrustedKey {
  /** The first 12 characters of its base64: what logs and the console name it by. */
  id: string;
  key: crypto.KeyObject;
}

/** A key as written in config; throws with what is wrong. */
export function parseReleaseKey(text: string): TrustedKey {
  const m = /^ed25519:([A-Za-z0-9+/]{43}=)$/.exec(text.trim());
  if (!m) throw new Error('a release signing key is written "ed25519:" followed by the base64 of its 32-byte public key');
  const raw = Buffer.from(m[1]!, 'base64');
  if (raw.length !== 32) throw new Error('an Ed25519 public key is 32 bytes');
  return { id: m[1]!.slice(0, 12), key: crypto.createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, raw]), format: 'der', type: 'spki' }) };
}

/** The keys trusted here: the project's, and those the owner configured. */
export function trustedReleaseKeys(configured: readonly string[]): TrustedKey[] {
  return [...PROJECT_RELEASE_KEYS, ...configured].map(parseReleaseKey);
}

/** The signature file's one line of base64 as 64 bytes, or undefined when it is not one. */
export function parseSignature(text: string): Buffer | undefined {
  const line = text.trim();
  if (!/^[A-Za-z0-9+/]{86}==$/.test(line)) return undefined;
  const sig = Buffer.from(line, 'base64');
  return sig.length === 64 ? sig : undefined;
}

/** The key that signed `sums`, or undefined when none of `keys` did. */
export function signedBy(sums: string, sig: Buffer, keys: readonly TrustedKey[]): TrustedKey | undefined {
  const data = Buffer.from(sums, 'utf8');
  return keys.find((k) => crypto.verify(null, data, k.key, sig));
}
