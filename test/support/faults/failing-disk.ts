// A real disk that turns read-only under a running agent, the way ext4 does after an I/O error
// (`errors=remount-ro`): an ext4 image on a loop device, its error raised through ext4's own
// `/sys/fs/ext4/<dev>/trigger_fs_error`, after which every write — also through files already open — fails
// with EROFS. (A plain `mount -o remount,ro` is refused, "mount point is busy", while any file is open for
// writing: the agent's ledger and log always are.) The kernel does not let that file system be written
// again while it is mounted (remount rw keeps `emergency_ro`); it is made writable the way an owner does
// it: the disk checked (e2fsck) and mounted again. Here a checked copy of the image is mounted over the
// failed mount (which the agent's open files keep alive, read-only), so the old mount's last writes can
// never reach the new one.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

let usable: boolean | undefined;

/** Whether this process may mount an ext4 image on a loop device and raise its error (root, loop devices); tried once. */
export function canFailDisk(): boolean {
  if (usable !== undefined) return usable;
  if (process.platform !== 'linux') return (usable = false);
  let disk: FailingDisk | undefined;
  try {
    disk = mountFailingDisk(8);
    usable = fs.existsSync(disk.errorTrigger());
  } catch {
    usable = false;
  } finally {
    disk?.unmount();
  }
  return usable;
}

export interface FailingDisk {
  /** The mounted folder. */
  dir: string;
  /** Writes what the file system holds in memory to the image (the test's writes before the error are on it). */
  sync(): void;
  /** Raises an ext4 error: the file system turns read-only at once, open files too (EROFS). */
  fail(): void;
  /** Whether a write to the folder is refused now. */
  readOnly(): boolean;
  /** The disk checked and mounted again on the same folder (a checked copy: see above); writable. */
  repair(): void;
  /** The sysfs file that raises the error. */
  errorTrigger(): string;
  unmount(): void;
}

export function mountFailingDisk(sizeMb: number): FailingDisk {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-failing-disk-'));
  const dir = path.join(work, 'home');
  fs.mkdirSync(dir, { mode: 0o700 });
  let image = path.join(work, 'disk-0.img');
  const images = [image];
  const mount = (): void => {
    execFileSync('mount', ['-o', 'loop,errors=remount-ro', image, dir], { stdio: 'ignore' });
    fs.chmodSync(dir, 0o700);
  };
  try {
    fs.writeFileSync(image, '');
    fs.truncateSync(image, sizeMb * 1024 * 1024);
    execFileSync('mkfs.ext4', ['-q', '-F', image], { stdio: 'ignore' });
    mount();
  } catch (e) {
    fs.rmSync(work, { recursive: true, force: true }); // not root, no loop device, no mkfs.ext4: nothing left behind
    throw e;
  }
  const device = (): string => execFileSync('findmnt', ['-n', '-o', 'SOURCE', '--mountpoint', dir]).toString().trim().split('\n').pop()!;
  const trigger = (): string => path.join('/sys/fs/ext4', path.basename(device()), 'trigger_fs_error');
  return {
    dir,
    sync() {
      execFileSync('sync', ['-f', dir]);
    },
    fail() {
      fs.writeFileSync(trigger(), 'swan test: the disk failed');
    },
    readOnly() {
      try {
        fs.writeFileSync(path.join(dir, '.probe'), '');
        fs.rmSync(path.join(dir, '.probe'));
        return false;
      } catch (e) {
        return (e as NodeJS.ErrnoException).code === 'EROFS';
      }
    },
    repair() {
      const copy = path.join(work, `disk-${images.length}.img`);
      fs.copyFileSync(image, copy);
      images.push(copy);
      image = copy;
      // 1: errors corrected (the error flag the trigger set), 0: none; anything else is a failure.
      try {
        execFileSync('e2fsck', ['-fy', image], { stdio: 'ignore' });
      } catch (e) {
        if ((e as { status?: number }).status !== 1) throw e;
      }
      // Mounted over the failed one, which stays underneath for the files still open on it: the folder is
      // never the empty one below for a moment (an agent retrying then would make a fresh ledger there).
      mount();
    },
    errorTrigger: trigger,
    unmount() {
      for (let i = 0; i < images.length + 1; i++) {
        try {
          execFileSync('umount', ['-l', dir], { stdio: 'ignore' });
        } catch {
          break; // nothing more mounted there
        }
      }
      fs.rmSync(work, { recursive: true, force: true });
    },
  };
}
