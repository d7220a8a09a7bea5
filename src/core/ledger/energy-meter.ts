// GPU energy per request. The GPU samples give the board power (W, summed over GPUs); a sample's
// power holds until the next sample (at most `maxHoldMs`, then it is unknown). Time is cut at every
// event — a sample, a request starting to run, a request ending — so between two cuts the power and
// the set of running requests are both constant: that slice's energy (W × s) is shared equally by
// the requests running in it, i.e. each request gets its share of the interval. Energy drawn while
// nothing runs is idle and charged to no request. Exact at the moment a request ends, so the
// ledger row carries its final figure.

interface Running {
  wh: number;
  /** Whether any slice with a known power fell inside it. */
  covered: boolean;
}

export class EnergyMeter {
  private watts: number | null = null;
  private sampleAt = 0;
  private cutAt = 0;
  private readonly running = new Map<string, Running>();
  /** Energy drawn while no request ran (Wh), since start. */
  idleWh = 0;

  constructor(private readonly maxHoldMs = 10_000) {}

  /** A GPU sample at `t`: total board power in W, or null when it is not known. */
  sample(t: number, watts: number | null): void {
    this.cut(t);
    this.watts = watts !== null && Number.isFinite(watts) && watts >= 0 ? watts : null;
    this.sampleAt = t;
  }

  has(id: string): boolean {
    return this.running.has(id);
  }

  /** A request started running on the engine at `t`. */
  begin(id: string, t: number): void {
    if (this.running.has(id)) return;
    this.cut(t);
    this.running.set(id, { wh: 0, covered: false });
  }

  /** A request ended at `t`: its energy in Wh, or null when no power was known while it ran. */
  end(id: string, t: number): number | null {
    const r = this.running.get(id);
    if (!r) return null;
    this.cut(t);
    this.running.delete(id);
    return r.covered ? r.wh : null;
  }

  private cut(t: number): void {
    if (t <= this.cutAt) return;
    const from = this.cutAt;
    this.cutAt = t;
    if (this.watts === null || from === 0) return;
    // The held power is known up to sampleAt + maxHoldMs.
    const until = Math.min(t, this.sampleAt + this.maxHoldMs);
    if (until <= from) return;
    const wh = (this.watts * (until - from)) / 3_600_000;
    if (this.running.size === 0) {
      this.idleWh += wh;
      return;
    }
    const share = wh / this.running.size;
    for (const r of this.running.values()) {
      r.wh += share;
      r.covered = true;
    }
  }
}

/** Total board power of a GPU sample (W), or null when no device reported one. */
export function samplePowerW(sample: { available: boolean; devices: Array<{ powerW: number | null }> }): number | null {
  if (!sample.available) return null;
  let sum = 0;
  let any = false;
  for (const d of sample.devices) {
    if (d.powerW !== null && Number.isFinite(d.powerW)) {
      sum += d.powerW;
      any = true;
    }
  }
  return any ? sum : null;
}
