// Self-healing, as the Go provider's self-check runner and alert monitor do it (selfcheck_runner.go,
// alert_monitor.go): a model whose real probes fail N times in a row (the deep check's one-token chat: no
// answer, an engine error, not served, the key refused), or whose real requests fail at >= 50 % over >= 10
// while its health reads fine, is withdrawn from what the hub is told: no traffic beats traffic that fails.
// Its probes go on; it is announced again once one passes (after a hold for a withdrawal by error rate,
// since its probes passed all along). A 400, 422 or 429 is the client's or our limiter's, never counted.
// Only what this part withdrew is put back: the owner's own switch-off is never undone. Each change is a
// 'change' event ({ model, withdrawn, reason, ... }) the owner feature turns into alerts, and a log line.
import { EventEmitter } from 'node:events';
import type { ModelHealth } from '../../shared/types';
import type { Logger } from '../base/log';

/** Why a model was withdrawn (stable: the console, the alerts and doctor name it). */
export type WithdrawReason = 'probe_failures' | 'error_rate';

export interface Withdrawal {
  model: string;
  reason: WithdrawReason;
  since: number;
  /** What was seen, in plain words (the last probe's error, or "12 of 20 requests failed"). */
  detail: string;
}

export interface SelfHealChange {
  model: string;
  /** true: withdrawn now; false: announced again. */
  withdrawn: boolean;
  reason: WithdrawReason;
  detail: string;
}

export interface SelfHealOptions {
  /** Failed probes in a row that withdraw a model (Go's FailuresBeforeDisable; [Agent] SelfHealFailures, 0 = never). */
  failures: number;
  /** Share of failed requests that withdraws a healthy-reading model (Go's ErrorRateThreshold, 0.5). */
  errorRate: number;
  /** Fewest requests the share is measured over (Go's ErrorRateMinRequests, 10). */
  minRequests: number;
  /** How far back the requests are counted. */
  windowMs: number;
  /** After a withdrawal by error rate: how long before a passing probe puts it back ([Agent] SelfHealHoldSeconds). */
  holdMs: number;
  /** The model's health now (an unhealthy model is the health check's to report; the rate is for the ones that read fine). */
  health: (model: string) => ModelHealth;
  log?: Logger;
  now?: () => number;
}

/** The deep check's failures that are the engine's to answer for (Go's BackendAtFault). */
const BACKEND_AT_FAULT: ReadonlySet<string> = new Set(['no_response', 'engine_error', 'not_served', 'key_rejected']);

interface ModelBook {
  failedInRow: number;
  lastError?: string;
  /** Finished real requests in the window: [at, failed]. */
  outcomes: Array<[number, boolean]>;
}

export class SelfHeal extends EventEmitter<{ change: [SelfHealChange] }> {
  private readonly books = new Map<string, ModelBook>();
  private readonly withdrawn = new Map<string, Withdrawal>();

  constructor(private readonly o: SelfHealOptions) {
    super();
  }

  private get now(): number {
    return (this.o.now ?? Date.now)();
  }

  private book(model: string): ModelBook {
    let b = this.books.get(model);
    if (!b) {
      b = { failedInRow: 0, outcomes: [] };
      this.books.set(model, b);
    }
    return b;
  }

  /** The models withdrawn now, with why. */
  withdrawals(): Withdrawal[] {
    return [...this.withdrawn.values()].map((w) => ({ ...w }));
  }

  isWithdrawn(model: string): boolean {
    return this.withdrawn.has(model);
  }

  /** Keeps only the models that are still served (one switched off or gone starts afresh if it comes back). */
  retain(models: string[]): void {
    const keep = new Set(models);
    for (const id of [...this.books.keys()]) if (!keep.has(id)) this.books.delete(id);
    for (const id of [...this.withdrawn.keys()]) if (!keep.has(id)) this.withdrawn.delete(id);
  }

  /** One deep check of the model (at any of its endpoints): ok, or its stable failure code. */
  probe(model: string, ok: boolean, code?: string, error?: string): void {
    const b = this.book(model);
    if (ok) {
      b.failedInRow = 0;
      const w = this.withdrawn.get(model);
      if (w && (w.reason === 'probe_failures' || this.now - w.since >= this.o.holdMs)) this.restore(w);
      return;
    }
    if (!code || !BACKEND_AT_FAULT.has(code)) return;
    b.failedInRow++;
    b.lastError = error ?? code;
    if (this.o.failures > 0 && b.failedInRow >= this.o.failures && !this.withdrawn.has(model)) {
      this.withdraw(model, 'probe_failures', `${b.failedInRow} real probes in a row failed (${code}): ${b.lastError}`);
    }
  }

  /** One finished real request (hub or gateway) of the model: status 'ok' or 'error' (others are not counted). */
  request(model: string, failed: boolean): void {
    const b = this.book(model);
    const now = this.now;
    b.outcomes.push([now, failed]);
    while (b.outcomes.length > 0 && now - (b.outcomes[0]?.[0] ?? now) > this.o.windowMs) b.outcomes.shift();
    // Bounded: the share of the newest requests is what matters.
    if (b.outcomes.length > 1000) b.outcomes.splice(0, b.outcomes.length - 1000);
    if (this.withdrawn.has(model) || this.o.minRequests <= 0) return;
    const total = b.outcomes.length;
    const bad = b.outcomes.filter(([, f]) => f).length;
    if (total < this.o.minRequests || bad / total < this.o.errorRate) return;
    // An unhealthy model is already out of routing and already reported; the rate speaks for the ones that read fine.
    if (this.o.health(model) === 'unhealthy') return;
    b.outcomes = [];
    this.withdraw(model, 'error_rate', `${bad} of ${total} requests failed (${Math.round((bad / total) * 100)} %) while its health checks passed`);
  }

  private withdraw(model: string, reason: WithdrawReason, detail: string): void {
    this.withdrawn.set(model, { model, reason, since: this.now, detail });
    this.o.log?.warn(`self-heal: ${model} withdrawn from the hub (${reason}): ${detail}; it is announced again once a real probe passes`);
    this.emit('change', { model, withdrawn: true, reason, detail });
  }

  private restore(w: Withdrawal): void {
    this.withdrawn.delete(w.model);
    const b = this.book(w.model);
    b.outcomes = [];
    b.failedInRow = 0;
    const detail = `a real probe passed after ${Math.round((this.now - w.since) / 1000)} s withdrawn`;
    this.o.log?.info(`self-heal: ${w.model} is announced to the hub again (${detail})`);
    this.emit('change', { model: w.model, withdrawn: false, reason: w.reason, detail });
  }
}
