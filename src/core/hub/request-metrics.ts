// The heartbeat's request metrics (Go keys: total_requests, requests_per_minute, avg_latency_ms,
// tokens_per_second; active_requests comes from the scheduler) over a real rolling window of the last
// 60 s, kept in one-second buckets so memory stays fixed whatever the request rate. Tokens count only
// when the engine reported them (an estimate is the ledger's business, marked as one). The window runs on the
// monotonic clock (base/clock.ts): a step of the wall clock moves no request into another second.
import { monoMs } from '../base/clock';

export interface FinishedRequest {
  latencyMs: number;
  tokensOut: number;
  estimated: boolean;
}

const WINDOW_S = 60;

export class RequestMetrics {
  private total = 0;
  private readonly second = new Float64Array(WINDOW_S).fill(-1);
  private readonly count = new Float64Array(WINDOW_S);
  private readonly latency = new Float64Array(WINDOW_S);
  private readonly tokens = new Float64Array(WINDOW_S);

  constructor(private readonly startedAt = monoMs()) {}

  /** One finished request, counted in the second it finished (monotonic ms). */
  record(r: FinishedRequest, at = monoMs()): void {
    this.total++;
    const s = Math.floor(at / 1000);
    const i = s % WINDOW_S;
    if (this.second[i] !== s) {
      this.second[i] = s;
      this.count[i] = 0;
      this.latency[i] = 0;
      this.tokens[i] = 0;
    }
    this.count[i]!++;
    this.latency[i]! += r.latencyMs;
    if (!r.estimated) this.tokens[i]! += r.tokensOut;
  }

  /** The Go metric keys, over the last 60 s (or since start when that is shorter). */
  snapshot(now = monoMs()): { total_requests: number; requests_per_minute: number; avg_latency_ms: number; tokens_per_second: number } {
    const s = Math.floor(now / 1000);
    let n = 0;
    let lat = 0;
    let tok = 0;
    for (let i = 0; i < WINDOW_S; i++) {
      const at = this.second[i]!;
      if (at < 0 || at <= s - WINDOW_S || at > s) continue;
      n += this.count[i]!;
      lat += this.latency[i]!;
      tok += this.tokens[i]!;
    }
    const spanS = Math.max(1, Math.min(WINDOW_S, (now - this.startedAt) / 1000));
    const r2 = (x: number): number => Math.round(x * 100) / 100;
    return {
      total_requests: this.total,
      requests_per_minute: r2((n / spanS) * 60),
      avg_latency_ms: n ? r2(lat / n) : 0,
      tokens_per_second: r2(tok / spanS),
    };
  }
}
