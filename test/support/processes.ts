// Which processes are running with a given text in their command line (Linux /proc): how the GPU tests see
// that a tool or scan they started was not left behind.
import fs from 'node:fs';

/** Pids whose command line contains `text`. */
export function processesUsing(text: string): number[] {
  const pids: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(text)) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}
