// The rails' time in plain words, one definition for the console's Usage page and `swan-provider usage`:
// "Paused 12 min today: GPU busy with another program 10 min, too hot 2 min". Only causes the ledger holds
// time for are named (usage.rails, src/core/ledger/rail-events.ts); each keeps its stable code beside it.
import type { RailSpanSummary } from './views/usage';

/** What each cause is called (the pause controller's causes). */
export const RAIL_CAUSE_WORDS: Readonly<Record<string, string>> = {
  manual: 'paused by you',
  gpu_hot: 'too hot',
  gpu_busy: 'GPU busy with another program',
  schedule: 'your pause schedule',
};

/** A duration as the summary says it: "45 s", "12 min", "3 h 5 min". */
export function fmtRailDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const min = Math.round(s / 60);
  if (min < 60) return `${min} min`;
  const h = Math.floor(min / 60);
  const m = min % 60;
  return m === 0 ? `${h} h` : `${h} h ${m} min`;
}

export interface RailPart {
  /** The cause's stable code. */
  code: string;
  ms: number;
  /** "too hot 2 min" */
  text: string;
}

export interface RailLine {
  /** rails_paused when serving was paused in the span, rails_throttled when only throttled, rails_clear otherwise. */
  code: 'rails_paused' | 'rails_throttled' | 'rails_clear';
  /** The whole line: "Paused 12 min today: GPU busy with another program 10 min, too hot 2 min." */
  text: string;
  /** "Paused 12 min today" (or "Not paused today"). */
  head: string;
  paused: RailPart[];
  throttled: RailPart[];
}

function parts(byCause: Record<string, number>): RailPart[] {
  return Object.entries(byCause)
    .filter(([, ms]) => ms > 0)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([code, ms]) => ({ code, ms, text: `${RAIL_CAUSE_WORDS[code] ?? code} ${fmtRailDuration(ms)}` }));
}

/** The span's line; `when` names it ("today", "in the last 7 days"). */
export function railLine(s: RailSpanSummary, when: string): RailLine {
  const paused = parts(s.pausedByCause);
  const throttled = parts(s.throttledByCause);
  const head = s.pausedMs > 0 ? `Paused ${fmtRailDuration(s.pausedMs)} ${when}` : `Not paused ${when}`;
  let text = paused.length > 0 ? `${head}: ${paused.map((p) => p.text).join(', ')}.` : `${head}.`;
  if (throttled.length > 0) text += ` Fewer requests at once ${fmtRailDuration(s.throttledMs)}: ${throttled.map((p) => p.text).join(', ')}.`;
  return { code: s.pausedMs > 0 ? 'rails_paused' : s.throttledMs > 0 ? 'rails_throttled' : 'rails_clear', text, head, paused, throttled };
}

export interface RailCostLine {
  /**
   * rails_cost_estimated: an estimate from this node's own rate; rails_cost_unknown: too little history to say
   * (no figure is given); rails_cost_none: nothing was paused and nothing declined.
   */
  code: 'rails_cost_estimated' | 'rails_cost_unknown' | 'rails_cost_none';
  text: string;
}

/** What the pauses cost, in words; `money` formats an amount in the price currency. */
export function railCostLine(s: RailSpanSummary, money: (n: number) => string): RailCostLine | undefined {
  const c = s.cost;
  if (!c) return undefined;
  const declined = c.declined > 0 ? ` ${c.declined} request${c.declined === 1 ? '' : 's'} from the network ${c.declined === 1 ? 'was' : 'were'} declined.` : '';
  if (s.pausedMs === 0) return c.declined > 0 ? { code: 'rails_cost_none', text: declined.trim() } : undefined;
  if (!c.known)
    return {
      code: 'rails_cost_unknown',
      text: `What the pauses cost is not known yet: it is estimated from your own rate once this node has served paid requests for an hour.${declined}`,
    };
  return {
    code: 'rails_cost_estimated',
    text: `Estimated cost of the pauses: about ${c.requests} request${c.requests === 1 ? '' : 's'} and ${money(c.earnings)} not earned (at this node's rate over its last ${fmtRailDuration(c.basisMs)}, paused time left out).${declined}`,
  };
}
