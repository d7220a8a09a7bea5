// Decides from the GPU's process list and samples whether someone else (a game, a render) is using
// the GPU heavily. Enter and leave thresholds differ and both need consecutive readings, so the
// verdict does not flap when usage hovers around a limit.
import type { GpuProcess, GpuSample } from '../../shared/types';

export interface GpuBusyThresholds {
  /** A non-engine process using more VRAM than this (MB) counts as busy (default 2048). */
  foreignVramMb: number;
  /** Busy ends only when every non-engine process is below this (MB, default 1024). */
  foreignVramClearMb: number;
  /** GPU utilisation (0..1) that counts as busy while none of our requests runs (default 0.5). */
  busyUtilization: number;
  /** Busy ends only when utilisation is below this (default 0.2). */
  clearUtilization: number;
  /** Consecutive busy readings before pausing (default 3). */
  pauseAfterReadings: number;
  /** Consecutive clear readings before resuming (default 5). */
  resumeAfterReadings: number;
  /** Process names never counted (desktop compositors and shells), compared case-insensitively on the base name. */
  ignoreProcesses: string[];
}

export const DEFAULT_GPU_BUSY: GpuBusyThresholds = {
  foreignVramMb: 2048,
  foreignVramClearMb: 1024,
  busyUtilization: 0.5,
  clearUtilization: 0.2,
  pauseAfterReadings: 3,
  resumeAfterReadings: 5,
  ignoreProcesses: ['Xorg', 'Xwayland', 'gnome-shell', 'kwin_x11', 'kwin_wayland', 'plasmashell', 'dwm.exe', 'explorer.exe', 'csrss.exe', 'WindowServer'],
};

export interface GpuBusyVerdict {
  busy: boolean;
  /** Why, for the owner (names the process), when busy. */
  reason?: string;
}

type Reading = 'busy' | 'clear' | 'between';

export class GpuBusyDetector {
  private busy = false;
  private reason?: string;
  private busyRun = 0;
  private clearRun = 0;
  private readonly ignored: Set<string>;

  constructor(private readonly t: GpuBusyThresholds = DEFAULT_GPU_BUSY) {
    this.ignored = new Set(t.ignoreProcesses.map((n) => n.toLowerCase()));
  }

  /** Feeds one reading; `engineInFlight` is how many of our requests run now. */
  update(procs: readonly GpuProcess[], sample: GpuSample | undefined, engineInFlight: number): GpuBusyVerdict {
    const { reading, why } = this.read(procs, sample, engineInFlight);
    if (reading === 'busy') {
      this.busyRun++;
      this.clearRun = 0;
      if (!this.busy && this.busyRun >= this.t.pauseAfterReadings) {
        this.busy = true;
        this.reason = why;
      }
    } else if (reading === 'clear') {
      this.clearRun++;
      this.busyRun = 0;
      if (this.busy && this.clearRun >= this.t.resumeAfterReadings) {
        this.busy = false;
        this.reason = undefined;
      }
    } else {
      this.busyRun = 0;
      this.clearRun = 0;
    }
    return this.verdict();
  }

  verdict(): GpuBusyVerdict {
    return this.busy ? { busy: true, reason: this.reason } : { busy: false };
  }

  private read(procs: readonly GpuProcess[], sample: GpuSample | undefined, engineInFlight: number): { reading: Reading; why?: string } {
    const foreign = procs.filter((p) => !p.isEngine && !this.ignored.has(baseName(p.name)));
    const heaviest = foreign.reduce<GpuProcess | undefined>((a, p) => ((p.usedMemoryMb ?? 0) > (a?.usedMemoryMb ?? 0) ? p : a), undefined);
    const heavyMb = heaviest?.usedMemoryMb ?? 0;
    if (heaviest && heavyMb > this.t.foreignVramMb) {
      return { reading: 'busy', why: `${heaviest.name} (pid ${heaviest.pid}) is using ${Math.round(heavyMb)} MB of GPU memory` };
    }

    const utils = sample?.available ? sample.devices.map((d) => d.utilization).filter((u): u is number => u !== null) : [];
    const util = utils.length > 0 ? Math.max(...utils) : undefined;
    if (util !== undefined && util >= this.t.busyUtilization && engineInFlight === 0) {
      return { reading: 'busy', why: `The GPU is ${Math.round(util * 100)}% busy with work that is not ours` };
    }

    const vramClear = heavyMb < this.t.foreignVramClearMb;
    // Without a usable sample, utilisation cannot hold a pause: the process list decides alone.
    const utilClear = util === undefined || util < this.t.clearUtilization;
    return { reading: vramClear && utilClear ? 'clear' : 'between' };
  }
}

function baseName(name: string): string {
  const parts = name.split(/[\\/]/);
  return (parts[parts.length - 1] ?? name).toLowerCase();
}
