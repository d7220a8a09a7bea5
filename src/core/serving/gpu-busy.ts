// Auto-pause when another program (a game) uses the GPU: every 5 s while the owner has the setting on,
// the GPU's process list feeds the pause controller (which has its own hysteresis).
import type { GpuSample } from '../../shared/types';
import { listGpuProcesses } from '../gpu/processes';
import type { Logger } from '../base/log';
import type { PauseController } from '../scheduler/pause';

export interface GpuBusyDeps {
  pause: PauseController;
  /** The owner's autoPauseOnGpuBusy setting, read on each apply(). */
  enabled: () => boolean;
  latestSample: () => GpuSample | undefined;
  env: NodeJS.ProcessEnv;
  log: Logger;
  intervalMs?: number;
}

export class GpuBusyWatch {
  private timer?: NodeJS.Timeout;

  constructor(private readonly d: GpuBusyDeps) {}

  /** (Re)starts or stops polling after the setting changed. */
  apply(): void {
    this.stop();
    if (!this.d.enabled()) {
      this.d.pause.updateGpuProcesses([]);
      return;
    }
    const check = async (): Promise<void> => {
      try {
        const procs = await listGpuProcesses({ env: this.d.env });
        this.d.pause.updateGpuProcesses(procs, this.d.latestSample());
      } catch (e) {
        this.d.log.debug(`GPU process list unavailable: ${(e as Error).message}`);
      }
    };
    void check();
    this.timer = setInterval(() => void check(), this.d.intervalMs ?? 5000);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
