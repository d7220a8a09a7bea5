// Which processes are running with a given text in their command line (Linux /proc): how the GPU tests see
// that a tool or scan they started was not left behind.
import fs from 'node:fs';

/** The parent pid in /proc/<pid>/stat (the field after the parenthesised command name, which may hold spaces). */
function parentOf(pid: string): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

/**
 * Pids whose command line contains `text`; with `childrenOf`, only that process's children, so a scan another
 * test file runs at the same moment (vitest runs files side by side) is not taken for this test's leftover.
 */
export function processesUsing(text: string, o: { childrenOf?: number } = {}): number[] {
  const pids: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (!fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(text)) continue;
      if (o.childrenOf !== undefined && parentOf(entry) !== o.childrenOf) continue;
      pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}
