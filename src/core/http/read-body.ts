// The body of an incoming HTTP request as text, refused past a byte limit (the stand-in hub and engine
// take at most 1 MB, like the real ones' read limits).
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
