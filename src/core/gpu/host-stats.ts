// Host CPU and RAM from the os module: a few syscalls per sample, no child process.
import os from 'node:os';

interface CpuTimes {
  busy: number;
  total: number;
}

function cpuTimes(): CpuTimes {
  let busy = 0;
  let total = 0;
  for (const cpu of os.cpus()) {
    const t = cpu.times;
    const all = t.user + t.nice + t.sys + t.idle + t.irq;
    total += all;
    busy += all - t.idle;
  }
  return { busy, total };
}

export interface HostReading {
  cpuPercent: number | null;
  ramUsedMb: number;
  ramTotalMb: number;
}

/** CPU % is the busy share of all cores since the previous reading (null on the first one). */
export class HostStats {
  private prev: CpuTimes | null = null;

  constructor() {
    this.prev = cpuTimes();
  }

  read(): HostReading {
    const now = cpuTimes();
    let cpuPercent: number | null = null;
    if (this.prev && now.total > this.prev.total) {
      cpuPercent = Math.round((1000 * (now.busy - this.prev.busy)) / (now.total - this.prev.total)) / 10;
    }
    this.prev = now;
    const total = os.totalmem();
    // os.freemem() is MemAvailable on Linux (page cache counts as free), which is what an owner means.
    const used = total - os.freemem();
    return { cpuPercent, ramUsedMb: Math.round(used / 1048576), ramTotalMb: Math.round(total / 1048576) };
  }
}
