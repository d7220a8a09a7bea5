// The rails' decisions in the ledger (schema v7, table rail_events): each decision of the guard rails and
// each pause cause set or cleared is one row with its stable code; the time serving was paused or throttled,
// by cause, is derived from those rows (a span starts at a row with active = 1 of its rail and cause and
// ends at the next row of the same rail and cause with active = 0, or at the agent's next start: the 'all'
// rail's row, since a stopped agent pauses and throttles nothing). Bounded: the detail is cut to
// DETAIL_MAX characters, a decision is never more than one row, and retention prunes them with the usage rows.
import type { RailCost, RailEventView, RailSpanSummary } from '../../shared/views/usage';

/** 'gpu': one GPU of several paused or serving again (its row names the GPU); the rig's spans do not count it. */
export type RailKind = 'pause' | 'throttle' | 'all' | 'gpu';

export interface RailEvent {
  /** Epoch ms. */
  at: number;
  /** Stable code: gpu_hot_throttle, gpu_hot_pause, gpu_cool_resume, pause_<cause>, resume_<cause>, rails_start. */
  code: string;
  rail: RailKind;
  /** manual | gpu_busy | gpu_hot | schedule (the pause controller's causes); 'agent' for the start row. */
  cause: string;
  /** true: a span of (rail, cause) starts here; false: it ends. */
  active: boolean;
  /** The GPU the decision is about, when one is known. */
  gpu?: number | null;
  /** What was seen, in plain words (cut to DETAIL_MAX). */
  detail: string;
}

export interface RailRow {
  id: number;
  at: number;
  code: string;
  rail: string;
  cause: string;
  active: number;
  gpu: number | null;
  detail: string;
}

export const DETAIL_MAX = 300;
const CODE_RE = /^[a-z][a-z0-9_]{0,47}$/;

/** The event as its row is written, or why it is refused (a bad code or time is the caller's bug). */
export function validateRailEvent(e: RailEvent): { ok: true; event: RailEvent } | { ok: false; reason: string } {
  if (!Number.isSafeInteger(e.at) || e.at < 0) return { ok: false, reason: 'at is not epoch ms' };
  if (!CODE_RE.test(e.code)) return { ok: false, reason: `code ${JSON.stringify(e.code).slice(0, 60)} is not a stable code` };
  if (!CODE_RE.test(e.cause)) return { ok: false, reason: 'cause is not a stable code' };
  if (e.rail !== 'pause' && e.rail !== 'throttle' && e.rail !== 'all' && e.rail !== 'gpu')
    return { ok: false, reason: 'rail is not pause, throttle, all or gpu' };
  const gpu = e.gpu === undefined || e.gpu === null || !Number.isSafeInteger(e.gpu) || e.gpu < 0 ? null : e.gpu;
  const detail = String(e.detail ?? '');
  return { ok: true, event: { ...e, gpu, detail: detail.length > DETAIL_MAX ? `${detail.slice(0, DETAIL_MAX - 1)}…` : detail } };
}

/** Which cause a moment paused by several is counted under (the pause controller's own order). */
const PAUSE_ORDER = ['manual', 'gpu_hot', 'gpu_busy', 'schedule'];

function rank(cause: string): number {
  const i = PAUSE_ORDER.indexOf(cause);
  return i < 0 ? PAUSE_ORDER.length : i;
}

/**
 * The time paused and throttled in [from, to), by cause. `before` are the rows that tell the state at
 * `from` (at least the last row before `from` of each rail and cause, and the last 'all' row before it),
 * `within` the rows with from <= at < to; both in id order. A moment paused by several causes counts once,
 * under the first of manual, gpu_hot, gpu_busy, schedule, so the causes add up to the total. A span still
 * open at `to` runs to `to` (the caller passes min(to, now)).
 */
export function railSpans(before: readonly RailRow[], within: readonly RailRow[], from: number, to: number): RailSpanSummary {
  const open = { pause: new Set<string>(), throttle: new Set<string>() };
  const apply = (r: RailRow): void => {
    if (r.rail === 'all') {
      open.pause.clear();
      open.throttle.clear();
      return;
    }
    const set = r.rail === 'pause' ? open.pause : r.rail === 'throttle' ? open.throttle : undefined;
    if (!set) return;
    if (r.active) set.add(r.cause);
    else set.delete(r.cause);
  };
  for (const r of [...before].sort((a, b) => a.id - b.id)) apply(r);
  const paused: Record<string, number> = {};
  const throttled: Record<string, number> = {};
  let at = from;
  const count = (until: number): void => {
    const end = Math.min(Math.max(until, from), to);
    if (end <= at) return;
    const p = [...open.pause].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b))[0];
    if (p !== undefined) paused[p] = (paused[p] ?? 0) + (end - at);
    const t = [...open.throttle].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b))[0];
    if (t !== undefined) throttled[t] = (throttled[t] ?? 0) + (end - at);
    at = end;
  };
  for (const r of [...within].sort((a, b) => a.id - b.id)) {
    count(r.at);
    apply(r);
  }
  count(to);
  const total = (m: Record<string, number>): number => Object.values(m).reduce((a, b) => a + b, 0);
  return {
    from,
    to,
    pausedMs: total(paused),
    pausedByCause: paused,
    throttledMs: total(throttled),
    throttledByCause: throttled,
    openPause: [...open.pause].sort((a, b) => rank(a) - rank(b)),
    openThrottle: [...open.throttle].sort((a, b) => rank(a) - rank(b)),
  };
}

/** Served this long (and paid at least once) before a rate is taken as telling. */
export const COST_MIN_BASIS_MS = 3_600_000;

/**
 * The estimate of what each pause cause cost: its paused time × the rate this node served (hub requests) and
 * earned over `basis` (served time, paused time left out). Unknown (no estimate) when the basis is too short
 * or held no paid request: a guess from nothing is not shown.
 */
export function railCost(summary: RailSpanSummary, basis: { servedMs: number; hubRequests: number; earnings: number }, declined: number): RailCost {
  const known = basis.servedMs >= COST_MIN_BASIS_MS && basis.hubRequests > 0 && basis.earnings > 0;
  const byCause: RailCost['byCause'] = {};
  let requests = 0;
  let earnings = 0;
  if (known) {
    for (const [cause, ms] of Object.entries(summary.pausedByCause)) {
      const r = Math.round((ms * basis.hubRequests) / basis.servedMs);
      const e = (ms * basis.earnings) / basis.servedMs;
      byCause[cause] = { requests: r, earnings: e };
      requests += r;
      earnings += e;
    }
  }
  return { known, declined, basisMs: Math.max(0, basis.servedMs), requests, earnings, byCause };
}

export function railView(r: RailRow): RailEventView {
  return { id: r.id, at: r.at, code: r.code, rail: r.rail, cause: r.cause, active: r.active === 1, gpu: r.gpu, detail: r.detail };
}
