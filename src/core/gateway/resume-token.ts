// Resume tokens of stream-v1: request id + last seq + expiry (+ the key's id, its SHA-256, so another
// key — even a new one under a revoked key's name — cannot resume it), signed with HMAC-SHA256. The signing key is 32 random bytes in the home folder (0600),
// so tokens survive a restart of the process but not a copy to another machine.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import type { Logger } from '../base/log';
import { HOME_FILES } from '../config/home-layout';
import { writeFileAtomic } from '../config/atomic-file';

export const RESUME_KEY_FILE = HOME_FILES.gatewayResumeKey;
const PREFIX = 'v1';

const payloadSchema = z.object({ r: z.string().min(1), k: z.string(), s: z.number().int().min(0), e: z.number().int() });

export interface ResumeClaim {
  requestId: string;
  /** The id (hash) of the key that started the request: names can be reused, ids cannot. */
  keyId: string;
  lastSeq: number;
  expiresAt: number;
}

/**
 * Why an invalid_resume_token was refused (the error's `reason`): not one of ours, altered or from another
 * gateway, unreadable inside; or (decided by the stream) issued to another key or for another request.
 */
export type ResumeRefusalReason = 'not_a_token' | 'bad_signature' | 'malformed' | 'other_key' | 'other_request';

export type ResumeCheck =
  | ({ ok: true } & ResumeClaim)
  | { ok: false; code: 'invalid_resume_token' | 'resume_token_expired'; reason?: ResumeRefusalReason; message: string; requestId?: string };

/** Reads the signing key, or creates it (0600). A file with the wrong size is replaced, with a warning. */
export function loadResumeKey(home: string, log?: Logger): Buffer {
  const file = path.join(home, RESUME_KEY_FILE);
  try {
    const buf = fs.readFileSync(file);
    if (buf.length === 32) {
      const mode = fs.statSync(file).mode & 0o777;
      if (mode & 0o077) {
        fs.chmodSync(file, 0o600);
        log?.warn(`${file} was readable by other users; its mode is now 0600`);
      }
      return buf;
    }
    log?.warn(`${file} does not hold a 32-byte key; making a new one (earlier resume tokens stop working)`);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error(`cannot read the resume-token key ${file}: ${(e as Error).message}`);
  }
  const key = crypto.randomBytes(32);
  writeFileAtomic(file, key);
  return key;
}

export class ResumeTokens {
  constructor(
    private readonly key: Buffer,
    private readonly now: () => number = Date.now,
  ) {}

  sign(c: ResumeClaim): string {
    const body = Buffer.from(JSON.stringify({ r: c.requestId, k: c.keyId, s: c.lastSeq, e: c.expiresAt })).toString('base64url');
    return `${PREFIX}.${body}.${this.mac(body)}`;
  }

  verify(token: string): ResumeCheck {
    const bad = (why: string, reason: ResumeRefusalReason): ResumeCheck => ({
      ok: false,
      code: 'invalid_resume_token',
      reason,
      message: `The resume token is not valid (${why}). Send the full start again with a new request_id.`,
    });
    const parts = token.split('.');
    if (parts.length !== 3 || parts[0] !== PREFIX) return bad('it is not a stream-v1 resume token', 'not_a_token');
    const [, body, sig] = parts as [string, string, string];
    const expected = Buffer.from(this.mac(body), 'utf8');
    const given = Buffer.from(sig, 'utf8');
    if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected))
      return bad('its signature does not match: it was altered or issued by another gateway', 'bad_signature');
    let claim: z.infer<typeof payloadSchema>;
    try {
      const parsed = payloadSchema.safeParse(JSON.parse(Buffer.from(body, 'base64url').toString('utf8')));
      if (!parsed.success) return bad('its contents are malformed', 'malformed');
      claim = parsed.data;
    } catch {
      return bad('its contents are malformed', 'malformed');
    }
    if (claim.e <= this.now()) {
      return {
        ok: false,
        code: 'resume_token_expired',
        requestId: claim.r,
        message: `The resume token for request ${claim.r} expired at ${new Date(claim.e).toISOString()}. Send the full start again with a new request_id.`,
      };
    }
    return { ok: true, requestId: claim.r, keyId: claim.k, lastSeq: claim.s, expiresAt: claim.e };
  }

  private mac(body: string): string {
    return crypto.createHmac('sha256', this.key).update(`${PREFIX}.${body}`).digest('base64url');
  }
}
