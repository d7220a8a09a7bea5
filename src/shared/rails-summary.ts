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
