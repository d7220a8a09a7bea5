// A JSON file in the home that more than one process writes (the CLI, the console's agent): each holder
// reads it again only when it changed on disk (inode, size, mtime), so what one writes, the others see at
// their next look, without reading the file on every look. Written with the one atomic 0600 writer.
import fs from 'node:fs';
import type { z } from 'zod';
import { writeJsonAtomic } from './atomic-file';

export class SharedJsonFile<T> {
  private stampSeen = '';
  private value: T;

  constructor(
    readonly file: string,
    private readonly schema: z.ZodType<T>,
    private readonly empty: () => T,
  ) {
    this.value = empty();
  }

  /** The stamp of the file as last read ('absent' when there was none). */
  stamp(): string {
    return this.stampSeen;
  }

  private fileStamp(): string {
    try {
      const st = fs.statSync(this.file);
      return `${st.ino}:${st.size}:${st.mtimeMs}`;
    } catch {
      return 'absent';
    }
  }

  /** The file's value (re-read when it changed on disk; missing or invalid: empty), and whether it was re-read. */
  read(): { value: T; changed: boolean } {
    const stamp = this.fileStamp();
    if (stamp === this.stampSeen) return { value: this.value, changed: false };
    let next = this.empty();
    try {
      const r = this.schema.safeParse(JSON.parse(fs.readFileSync(this.file, 'utf8')));
      if (r.success) next = r.data;
    } catch {
      // missing or unreadable: empty
    }
    this.value = next;
    this.stampSeen = stamp;
    return { value: next, changed: true };
  }

  write(value: T): void {
    writeJsonAtomic(this.file, value);
    this.value = value;
    this.stampSeen = this.fileStamp();
  }
}
