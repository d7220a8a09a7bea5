// The rails' decisions into the ledger (rail_events, ledger/rail-events.ts), where they are made: each
// decision of the guard rails (gpu_hot_throttle, gpu_hot_pause, gpu_cool_resume) and each pause cause set or
// cleared (pause_<cause>, resume_<cause>: manual, gpu_busy, gpu_hot, schedule), and the agent's start
// (rails_start), which ends every span a stopped agent left open. The ledger's writer holds a decision the
// database cannot take now (bounded) and never blocks serving; without a ledger nothing is recorded.
import type { Ledger } from '../ledger/ledger';
import type { RailDecision } from '../scheduler/guard-rails';
import type { PauseCauseChange, PauseController } from '../scheduler/pause';
import type { GpuCauseChange, GpuPauses } from '../scheduler/gpu-pauses';

export interface RailRecordDeps {
  pause: Pick<PauseController, 'on'>;
  /** One GPU of several paused or serving again (gpu_pause_<cause>, gpu_resume_<cause>). */
  gpuPauses?: Pick<GpuPauses, 'on'>;
  ledger: Pick<Ledger, 'recordRail'> | undefined;
  now?: () => number;
}

export class RailRecord {
  private readonly now: () => number;

  constructor(private readonly d: RailRecordDeps) {
    this.now = d.now ?? Date.now;
    d.pause.on('cause', (c: PauseCauseChange) => {
      d.ledger?.recordRail({
        at: c.at,
        code: `${c.active ? 'pause' : 'resume'}_${c.cause}`,
        rail: 'pause',
        cause: c.cause,
        active: c.active,
        gpu: null,
        detail: c.reason,
      });
    });
    d.gpuPauses?.on('cause', (c: GpuCauseChange) => {
      d.ledger?.recordRail({ at: c.at, code: c.code, rail: 'gpu', cause: c.cause, active: c.active, gpu: c.gpu, detail: c.reason });
    });
  }

  /** The agent started: nothing is paused or throttled by the rails of an earlier run. */
  started(): void {
    this.d.ledger?.recordRail({ at: this.now(), code: 'rails_start', rail: 'all', cause: 'agent', active: false, gpu: null, detail: 'the agent started' });
  }

  /** The owner had the driver's power limit of one GPU set (gpu_power_limit_set): a decision, not a span. */
  powerLimit(gpu: number, w: number, fromW: number | null): void {
    this.d.ledger?.recordRail({
      at: this.now(),
      code: 'gpu_power_limit_set',
      rail: 'gpu',
      cause: 'power_limit',
      active: false,
      gpu,
      detail: `power limit set to ${w} W${fromW !== null ? ` (was ${fromW} W)` : ''} by the owner`,
    });
  }

  /** A guard rails' decision: throttled (and paused) until gpu_cool_resume. */
  decision(r: RailDecision): void {
    this.d.ledger?.recordRail({
      at: this.now(),
      code: r.code,
      rail: 'throttle',
      cause: 'gpu_hot',
      active: r.state !== 'ok',
      gpu: r.gpu ?? null,
      detail: r.reason,
    });
  }
}
