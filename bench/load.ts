// How busy the whole machine was while the bench ran (other programs steal the cores the figures
// depend on): load average, and the share of all cores in use from /proc/stat, at start and over the run.
import fs from 'node:fs';
import os from 'node:os';
import { round } from './stats';

export interface MachineLoad {
  loadAvgStart: number[];
  loadAvgEnd: number[];
  /** Share of all cores busy over the run (every process on the machine), %. */
  busyPercent: number;
  /** A warning line when the machine was busy with other work. */
  warning?: string;
}

function cpuTicks(): { busy: number; total: number } {
  const line = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
  const v = line.trim().split(/\s+/).slice(1).map(Number);
  const idle = (v[3] ?? 0) + (v[4] ?? 0); // idle + iowait
  const total = v.reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}

export class LoadMonitor {
  private readonly start = cpuTicks();
  private readonly loadStart = os.loadavg().map((x) => round(x, 2));

  finish(): MachineLoad {
    const end = cpuTicks();
    const busyPercent = round(((end.busy - this.start.busy) / Math.max(1, end.total - this.start.total)) * 100, 1);
    const loadAvgEnd = os.loadavg().map((x) => round(x, 2));
    const cores = os.availableParallelism();
    const busyStart = (this.loadStart[0] ?? 0) > cores;
    return {
      loadAvgStart: this.loadStart,
      loadAvgEnd,
      busyPercent,
      ...(busyStart
        ? {
            warning: `the machine was busy with other work when the bench started (load ${this.loadStart[0]} on ${cores} cores): the figures are noisier than on a quiet machine`,
          }
        : {}),
    };
  }
}
