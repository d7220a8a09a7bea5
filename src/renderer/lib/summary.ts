// The Dashboard's banner: the agent's verdict (serving, not routed, not earning, degraded, stopped — why,
// and what to do), plus what only the console sees: a hot GPU, a high failure rate today, and an agent
// the console cannot reach. Pure, from the snapshot, the newest GPU sample and the connection.
import type { AgentSnapshot } from '../../shared/views/snapshot';
import type { GpuSample, Verdict, VerdictCode, VerdictState } from '../../shared/types';
import type { ConnectionStatus } from '../bridge/connection';

export const HOT_GPU_C = 85;
export const FAILURE_RATE = 0.05;

/** Stop findings that are a choice or a wait, not a fault (the verdict's own tone for them is amber too). */
const AMBER_STOPS = new Set<SummaryCode>(['paused', 'connecting', 'nothing_to_serve', 'none_switched_on']);

export type SummaryCode = VerdictCode | 'gpu_hot' | 'failures';
export interface SummaryItem {
  code: SummaryCode;
  tone: 'bad' | 'warn';
  text: string;
  /** The next step, when there is one. */
  next?: string;
}
export interface Summary {
  state: VerdictState;
  tone: 'ok' | 'warn' | 'bad';
  /** The verdict's one line. */
  headline: string;
  items: SummaryItem[];
}

/** The verdict as the console shows it: the agent's, unless the console cannot reach the agent at all. */
export function consoleVerdict(s: AgentSnapshot, connection: ConnectionStatus = 'open'): Verdict {
  if (connection === 'open' || connection === 'connecting') return s.verdict;
  const text = 'The console cannot reach the agent: it may have stopped. What is shown is from before.';
  return {
    state: 'stopped',
    tone: 'bad',
    label: 'Agent not reachable',
    headline: text,
    reasons: [
      { code: 'agent_stopped', state: 'stopped', text, next: 'Start the agent again (swan-provider run, or the desktop app); this page reconnects by itself.' },
    ],
    routable: [],
  };
}

export function summarize(s: AgentSnapshot, sample: GpuSample | null, connection: ConnectionStatus = 'open'): Summary {
  const v = consoleVerdict(s, connection);
  const items: SummaryItem[] = v.reasons.map((r) => ({
    code: r.code,
    tone: r.state === 'stopped' && !AMBER_STOPS.has(r.code) ? 'bad' : r.state === 'degraded' && v.routable.length === 0 ? 'bad' : 'warn',
    text: r.text,
    ...(r.next ? { next: r.next } : {}),
  }));
  if (sample?.available) {
    const hot = sample.devices.filter((d) => d.temperatureC !== null && d.temperatureC >= HOT_GPU_C);
    for (const d of hot)
      items.push({
        code: 'gpu_hot',
        tone: 'warn',
        text: `GPU ${d.index} is at ${Math.round(d.temperatureC!)} °C (${HOT_GPU_C} °C or more): check its cooling.`,
      });
  }
  // Over a recent window, not the day: "24 of 67 failed today" would stay up long after the engine recovered.
  const recent = s.recent;
  if (recent && recent.requests > 0 && recent.errors / recent.requests >= FAILURE_RATE) {
    const { requests, errors } = recent;
    const minutes = Math.round(recent.windowMs / 60_000);
    items.push({
      code: 'failures',
      tone: 'warn',
      text: `${errors} of ${requests} requests failed in the last ${minutes} minutes (${Math.round((errors / requests) * 1000) / 10} %): see Requests and Logs.`,
    });
  }
  const tone = v.tone === 'bad' || items.some((i) => i.tone === 'bad') ? 'bad' : v.tone === 'warn' || items.length > 0 ? 'warn' : 'ok';
  return { state: v.state, tone, headline: v.headline, items };
}
