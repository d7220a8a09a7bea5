// Bodies from outside as text, refused past a byte limit, read in pieces so nothing over the limit is ever
// held: an incoming request's (the stand-in hub and engine take at most 1 MB, like the real ones' read
// limits), and the answer of a server the agent asked (the platform's catalogue and provider status, the
// update feed): one that streams for its whole deadline is cut off at the limit, not read whole first.
import type http from 'node:http';

export const MAX_BODY_BYTES = 1024 * 1024;

/** Reads the whole body; rejects (and destroys the request) once it passes `limit` bytes. */
export function readBody(req: http.IncomingMessage, limit = MAX_BODY_BYTES): Promise<string> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        reject(new Error(`request body over ${limit === MAX_BODY_BYTES ? '1 MB' : `${limit} bytes`}`));
        req.destroy();
      } else parts.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

/** Why a body was refused: over its byte limit. */
export class BodyTooLarge extends Error {
  readonly code = 'too_large';
  constructor(readonly limit: number) {
    super(`the body is over the ${limit}-byte limit`);
  }
}

/** Reads a fetch answer's body; cancels it and throws BodyTooLarge once it passes `maxBytes`. */
export async function readCapped(res: Response, maxBytes: number): Promise<string> {
  const declared = Number(res.headers.get('content-length') ?? 0);
  if (declared > maxBytes) {
    await res.body?.cancel();
    throw new BodyTooLarge(maxBytes);
  }
  if (!res.body) return '';
  const reader = res.body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      throw new BodyTooLarge(maxBytes);
    }
    parts.push(value);
  }
  return Buffer.concat(parts).toString('utf8');
}
