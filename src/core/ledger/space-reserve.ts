// Space kept in reserve for the ledger, on the disk that holds it. A full disk refuses the ledger's writes
// while the hub has already been told each request finished (the final leaves after the commit attempt:
// decision 0001), so the rows are held in memory — and a held row is lost when the agent stops before there
// is room. The reserve is a file of real blocks (written zeros: a sparse file frees nothing) made while
// there is room; the first write the disk refuses releases it and the writer tries again at once, so the
// rows go to the database, not to memory. It is made again once the disk has room for it and some to spare.
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from '../base/log';

export interface SpaceReserveOptions {
  /** The reserve's size (the agent's: 16 MB, about 10,000 rows with their WAL pages). */
  bytes: number;
  log: Logger;
}

const CHUNK = 1024 * 1024;
/** The reserve is made again only when this many times its size is free: never the one to fill the disk. */
const ROOM_FACTOR = 4;

export class SpaceReserve {
  constructor(
    readonly file: string,
    private readonly o: SpaceReserveOptions,
  ) {}

  /** Whether the reserve is on disk at its full size now. */
  get held(): boolean {
    try {
      return fs.statSync(this.file).size >= this.o.bytes;
    } catch {
      return false;
    }
  }

  /** Makes the reserve when it is missing and the disk has room for it to spare; true when it is held. */
  ensure(): boolean {
    if (this.held) return true;
    if (!this.roomFor(this.o.bytes * ROOM_FACTOR)) return false;
    let fd: number | undefined;
    try {
      fd = fs.openSync(this.file, 'w', 0o600);
      const zeros = Buffer.alloc(Math.min(CHUNK, this.o.bytes));
      // Written, not truncated: ext4 (delayed allocation), xfs and tmpfs count written blocks as used at write()
      // time, so no fsync is needed for the space to be held (copy-on-write file systems promise nothing either way).
      for (let done = 0; done < this.o.bytes;) {
        const n = fs.writeSync(fd, zeros, 0, Math.min(zeros.length, this.o.bytes - done));
        done += n;
      }
      return true;
    } catch (err) {
      this.o.log.debug(`The ledger's reserve could not be made: ${err instanceof Error ? err.message : String(err)}`);
      fs.rmSync(this.file, { force: true });
      return false;
    } finally {
      if (fd !== undefined) fs.closeSync(fd);
    }
  }

  /** Frees the reserve's space (the disk is full); true when there was one to free. */
  release(): boolean {
    try {
      const size = fs.statSync(this.file).size;
      fs.rmSync(this.file, { force: true });
      if (size > 0)
        this.o.log.warn(
          `The disk is full: released the ${Math.round(size / CHUNK)} MB kept in reserve for the usage database, so what was served is still written.`,
          { code: 'ledger_reserve_released' },
        );
      return size > 0;
    } catch {
      return false;
    }
  }

  private roomFor(bytes: number): boolean {
    try {
      const st = fs.statfsSync(path.dirname(this.file));
      return st.bavail * st.bsize >= bytes;
    } catch {
      return false;
    }
  }
}
