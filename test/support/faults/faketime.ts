// A child process whose wall clock a test steps while it runs: Debian's libfaketime (package `faketime`)
// preloaded, reading its offset from a file on every call (FAKETIME_NO_CACHE), the monotonic clock left
// alone (FAKETIME_DONT_FAKE_MONOTONIC), as NTP steps, a suspend and resume or a manual change do.
import fs from 'node:fs';
import path from 'node:path';

const CANDIDATES = [
  '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1',
  '/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1',
  '/usr/lib/faketime/libfaketime.so.1',
];

/** libfaketime's path, or undefined when the `faketime` package is not installed. */
export const LIBFAKETIME = CANDIDATES.find((p) => fs.existsSync(p));

export class SteppedClock {
  readonly file: string;

  constructor(dir: string) {
    this.file = path.join(dir, 'faketime-offset');
    this.set(0);
  }

  /** The child's wall clock at real time + `seconds` (libfaketime's relative "+N"/"-N" form). */
  set(seconds: number): void {
    fs.writeFileSync(this.file, `${seconds >= 0 ? '+' : ''}${seconds}\n`);
  }

  /** The environment that puts a child under this clock. */
  env(): NodeJS.ProcessEnv {
    if (!LIBFAKETIME) throw new Error('libfaketime is not installed (apt-get install faketime)');
    return { LD_PRELOAD: LIBFAKETIME, FAKETIME_TIMESTAMP_FILE: this.file, FAKETIME_NO_CACHE: '1', FAKETIME_DONT_FAKE_MONOTONIC: '1' };
  }
}
