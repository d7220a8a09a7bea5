// CPU time and resident memory of a process, read from Linux /proc: utime+stime (fields 14 and 15 of
// /proc/<pid>/stat, in clock ticks) and VmRSS of /proc/<pid>/status. Also the RSS of the whole process
// tree (children such as a tool the process spawned), since a user pays for those too.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

let ticksPerSecond: number | undefined;

/** Clock ticks per second (getconf CLK_TCK; 100 on every common Linux). */
export function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/**
 * CPU seconds (user + system) the process has used so far; with `reaped`, plus what its children that
 * already exited used (cutime + cstime: a tool spawned per sample shows up there).
 */
export function cpuSeconds(pid: number, reaped = false): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) is in parentheses and may hold spaces: split after its closing one.
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // f[0] is field 3 (state): utime, stime, cutime, cstime (fields 14-17) are f[11]..f[14].
  const ticks = Number(f[11]) + Number(f[12]) + (reaped ? Number(f[13]) + Number(f[14]) : 0);
  return ticks / clockTicks();
}

/** CPU seconds the process has used so far, user and system apart (utime, stime). */
export function cpuSplit(pid: number): { user: number; system: number } {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { user: Number(f[11]) / clockTicks(), system: Number(f[12]) / clockTicks() };
}

/** Resident set size in MB (VmRSS). */
export function rssMb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
  if (!m) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(m[1]) / 1024;
}

/** Pids of every descendant of pid (children, grandchildren, …). */
export function descendants(pid: number): number[] {
  const out: number[] = [];
  const queue = [pid];
  while (queue.length) {
    const p = queue.shift() as number;
    let children: string;
    try {
      children = fs
        .readdirSync(`/proc/${p}/task`)
        .map((t) => {
          try {
            return fs.readFileSync(`/proc/${p}/task/${t}/children`, 'utf8');
          } catch {
            return '';
          }
        })
        .join(' ');
    } catch {
      continue;
    }
    for (const c of children.split(/\s+/).filter(Boolean).map(Number)) {
      out.push(c);
      queue.push(c);
    }
  }
  return out;
}

/** RSS of the process and all its descendants, in MB. */
export function treeRssMb(pid: number): number {
  let total = rssMb(pid);
  for (const c of descendants(pid)) {
    try {
      total += rssMb(c);
    } catch {
      // exited meanwhile
    }
  }
  return total;
}

/** CPU seconds of the process, its exited children and its live descendants. */
export function treeCpuSeconds(pid: number): number {
  let total = cpuSeconds(pid, true);
  for (const c of descendants(pid)) {
    try {
      total += cpuSeconds(c, true);
    } catch {
      // exited meanwhile
    }
  }
  return total;
}
