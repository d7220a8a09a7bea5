// `run --console-token-file PATH`: the console token kept in a 0600 file, so the console URL (and a
// bookmark of it) stays the same across restarts. Created with a random token when missing.
import fs from 'node:fs';
import path from 'node:path';
import { newToken } from '../core/console/auth';

const TOKEN = /^[A-Za-z0-9_-]{16,256}$/;

/** Reads the token (creating the file when absent) and makes sure only the owner can read it. */
export function loadOrCreateToken(file: string): string {
  const p = path.resolve(file);
  if (!fs.existsSync(p)) {
    fs.mkdirSync(path.dirname(p), { recursive: true });
    const token = newToken();
    try {
      fs.writeFileSync(p, `${token}\n`, { mode: 0o600, flag: 'wx' });
      return token;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      // Another process created it first: use theirs.
    }
  }
  const text = fs.readFileSync(p, 'utf8').trim();
  if (!TOKEN.test(text)) {
    throw new Error(`${p} does not hold a console token (16 to 256 letters, digits, "-" or "_"). Delete the file to get a new one.`);
  }
  if (process.platform !== 'win32' && (fs.statSync(p).mode & 0o077) !== 0) fs.chmodSync(p, 0o600);
  return text;
}
