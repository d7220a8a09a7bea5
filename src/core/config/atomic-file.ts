// The one atomic writer for the agent's own files: write a temp file beside the target (owner only),
// then rename it over the target, so a crash mid-write leaves the old file, never half a new one.
import fs from 'node:fs';
import path from 'node:path';
import { DIR_MODE, FILE_MODE } from './home';

/** Writes `data` to `file` atomically with mode 0600, creating the folder when missing (0700: cache/, weights/…). */
export function writeFileAtomic(file: string, data: string | Uint8Array): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: DIR_MODE });
  const tmp = `${file}.${process.pid}.tmp`;
  // A stale temp file keeps its old mode (writeFileSync's mode applies only on creation): remove it first.
  fs.rmSync(tmp, { force: true });
  fs.writeFileSync(tmp, data, { mode: FILE_MODE });
  fs.renameSync(tmp, file);
}

/** `value` as JSON (indented by `indent` spaces; 0 for one line), written with writeFileAtomic. */
export function writeJsonAtomic(file: string, value: unknown, indent = 2): void {
  writeFileAtomic(file, JSON.stringify(value, null, indent));
}
