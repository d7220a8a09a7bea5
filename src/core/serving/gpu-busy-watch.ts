// Auto-pause when another program (a game) uses the GPU: every 5 s while the owner has the setting on, the
// GPU's process list feeds the pause controller (which has its own hysteresis). On a rig with several GPUs it
// acts per GPU instead: a game on GPU 0 pauses GPU 0's models only (engines/gpu-holds.ts), and the same list
// tells on which GPUs each found engine runs (the driver's word), which is read even with the setting off.
import type { GpuInfo, GpuProcess, GpuSample } from '../../shared/types';
import { gpusOfListeningPort } from '../gpu/engine-placement';
import { listGpuProcesses } from '../gpu/processes';
import type { Logger } from '../base/log';
import type { PauseController } from '../scheduler/pause';
import type { GpuHolds } from '../engines/gpu-holds';

export interface GpuBusyDeps {
  pause: PauseController;
  /** Per-GPU serving (absent: the rig-wide pause only). */
  holds?: Pick<GpuHolds, 'pauses' | 'learn'>;
  /** The GPUs detection found (uuid → index for the process list). */
  gpus?: () => GpuInfo[];
  /** Addresses of the engines this agent did not start, whose GPUs the driver may tell. */
  foundEngines?: () => string[];
  /** The owner's autoPauseOnGpuBusy setting, read on each apply(). */
  enabled: () => boolean;
  latestSample: () => GpuSample | undefined;
  env: NodeJS.ProcessEnv;
  log: Logger;
  intervalMs?: number;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]', '::1', '0.0.0.0']);
/** How long the driver's word on a found engine's GPUs stands: reading it walks /proc, so not every tick. */
const PLACEMENT_TTL_MS = 60_000;

export class GpuBusyWatch {
  private timer?: NodeJS.Timeout;
  /** When each found engine's GPUs were last read (engine address → ms). */
  private readonly placedAt = new Map<string, number>();

  constructor(private readonly deps: GpuBusyDeps) {}

  /** Several GPUs: per-GPU serving applies (placement is read whatever the setting). */
  private get perGpu(): boolean {
    return this.deps.holds?.pauses.perGpu ?? false;
  }

  /** (Re)starts or stops polling after the setting (or the GPUs found) changed. */
  apply(): void {
    this.stop();
    const enabled = this.deps.enabled();
    if (!enabled) {
      this.deps.pause.updateGpuProcesses([]);
      this.deps.holds?.pauses.clearBusy();
      // Per-GPU serving needs the placement whatever the setting; whether the rig has several GPUs is known
      // only after detection, so the watch keeps ticking (and asks nvidia-smi only when there is a use).
      if (!this.deps.holds) return;
    }
    let running = false;
    const check = async (): Promise<void> => {
      // A slow nvidia-smi or /proc walk is never overlapped by the next tick.
      if (running || (!this.perGpu && !this.deps.enabled())) return;
      running = true;
      try {
        const procs = await listGpuProcesses({ env: this.deps.env });
        if (this.perGpu) await this.perGpuCheck(procs, this.deps.enabled());
        else if (this.deps.enabled()) this.deps.pause.updateGpuProcesses(procs, this.deps.latestSample());
      } catch (e) {
        this.deps.log.debug(`GPU process list unavailable: ${(e as Error).message}`);
      } finally {
        running = false;
      }
    };
    void check();
    this.timer = setInterval(() => void check(), this.deps.intervalMs ?? 5000);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private async perGpuCheck(procs: GpuProcess[], busyOn: boolean): Promise<void> {
    const holds = this.deps.holds!;
    const gpus = this.deps.gpus?.() ?? [];
    const byUuid = new Map(gpus.filter((g) => g.uuid).map((g) => [g.uuid!, g.index]));
    if (busyOn) {
      const sample = this.deps.latestSample();
      for (const g of gpus) {
        // A process the driver does not place is counted on every GPU: it may be on this one.
        const on = procs.filter((p) => !p.gpuUuid || byUuid.get(p.gpuUuid) === g.index);
        const device = sample?.available ? sample.devices.find((d) => d.index === g.index) : undefined;
        holds.pauses.updateGpu(g.index, on, device);
      }
    }
    const apps = procs.map((p) => ({ pid: p.pid, ...(p.gpuUuid ? { gpuUuid: p.gpuUuid } : {}) }));
    const gpuIds = gpus.map((g) => ({ index: g.index, ...(g.uuid ? { uuid: g.uuid } : {}) }));
    const now = Date.now();
    const urls = this.deps.foundEngines?.() ?? [];
    for (const url of [...this.placedAt.keys()]) if (!urls.includes(url)) this.placedAt.delete(url);
    for (const url of urls) {
      const port = loopbackPort(url);
      if (port === undefined || now - (this.placedAt.get(url) ?? -Infinity) < PLACEMENT_TTL_MS) continue;
      this.placedAt.set(url, now);
      const found = await gpusOfListeningPort(port, { computeApps: apps, gpus: gpuIds });
      holds.learn(url, 'gpus' in found ? found.gpus : undefined);
    }
  }
}

/** The port of an engine on this machine; undefined for another host (the driver here knows nothing of it). */
function loopbackPort(url: string): number | undefined {
  try {
    const u = new URL(url);
    if (!LOOPBACK.has(u.hostname)) return undefined;
    return Number(u.port || (u.protocol === 'https:' ? 443 : 80));
  } catch {
    return undefined;
  }
}
