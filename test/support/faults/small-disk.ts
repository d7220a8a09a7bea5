// A real small disk for the disk faults: a tmpfs of a few MB mounted on a temp folder (the tests run as
// root; where mounting is not allowed, canMount() is false and the suites say they were skipped). A full
// disk is the kernel's own ENOSPC (a filler file written until it refuses), a read-only one the kernel's
// EROFS (the tmpfs remounted read-only).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

let mountable: boolean | undefined;

/** Whether this process may mount a tmpfs (root, and a sandbox that allows it); tried once. */
export function canMount(): boolean {
  if (mountable !== undefined) return mountable;
  if (process.platform !== 'linux') return (mountable = false);
  const probe = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-mount-probe-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', probe], { stdio: 'ignore' });
    execFileSync('umount', [probe], { stdio: 'ignore' });
    mountable = true;
  } catch {
    mountable = false;
  }
  fs.rmSync(probe, { recursive: true, force: true });
  return mountable;
}

export interface SmallDisk {
  /** The mounted folder. */
  dir: string;
  /** Writes a filler file until the disk refuses (ENOSPC); returns the bytes written. */
  fill(): number;
  /** Removes the filler: the space comes back. */
  free(): void;
  /** Remounts the disk read-only (EROFS from now on), or writable again. */
  readOnly(on: boolean): void;
  /** Bytes free now. */
  available(): number;
  unmount(): void;
}

export function mountSmallDisk(sizeMb: number): SmallDisk {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-small-disk-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m,mode=0700`, 'tmpfs', dir]);
  const filler = path.join(dir, 'filler');
  return {
    dir,
    fill() {
      const fd = fs.openSync(filler, 'a');
      const chunk = Buffer.alloc(64 * 1024, 1);
      let written = 0;
      try {
        for (;;) {
          try {
            written += fs.writeSync(fd, chunk);
          } catch (e) {
            if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
            return written + fillSmall(fd);
          }
        }
      } finally {
        fs.closeSync(fd);
      }
    },
    free() {
      fs.rmSync(filler, { force: true });
    },
    readOnly(on) {
      execFileSync('mount', ['-o', `remount,${on ? 'ro' : 'rw'}`, dir]);
    },
    available() {
      const st = fs.statfsSync(dir);
      return st.bavail * st.bsize;
    },
    unmount() {
      try {
        execFileSync('umount', ['-l', dir], { stdio: 'ignore' });
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/** The last bytes, one page at a time, until not even one fits. */
function fillSmall(fd: number): number {
  const page = Buffer.alloc(4096, 1);
  let written = 0;
  for (;;) {
    try {
      written += fs.writeSync(fd, page);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOSPC') return written;
      throw e;
    }
  }
}
