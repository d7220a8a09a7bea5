// The Dashboard's one operational line: what needs the owner's attention now, worst first, or that
// all is well. Pure, from the snapshot and the newest GPU sample.
import type { AgentSnapshot } from '../../shared/bridge';
import type { GpuSample } from '../../shared/types';

export const HOT_GPU_C = 85;
export const FAILURE_RATE = 0.05;

export type SummaryCode = 'disconnected' | 'key_refused' | 'paused' | 'no_models' | 'none_enabled' | 'unhealthy' | 'degraded' | 'gpu_hot' | 'failures';
export interface SummaryItem {
  code: SummaryCode;
  tone: 'bad' | 'warn';
  text: string;
}
export interface Summary {
  tone: 'ok' | 'warn' | 'bad';
  items: SummaryItem[];
  /** The all-is-well line when there are no items. */
  ok?: string;
}

function names(ids: string[]): string {
  return ids.length <= 3 ? ids.join(', ') : `${ids.slice(0, 3).join(', ')} and ${ids.length - 3} more`;
}

export function summarize(s: AgentSnapshot, sample: GpuSample | null): Summary {
  const items: SummaryItem[] = [];
  const paused = s.pause.paused;
  if (s.link.state === 'auth_failed') items.push({ code: 'key_refused', tone: 'bad', text: 'The hub refused your provider key: paste a valid one in Settings.' });
  else if (s.link.state !== 'connected') items.push({ code: 'disconnected', tone: 'bad', text: `Not connected to the hub${s.link.reason ? ` (${s.link.reason})` : ''}.` });
  if (paused) items.push({ code: 'paused', tone: 'warn', text: 'Serving is paused: the hub sends no requests.' });
  const enabled = s.models.filter((m) => m.enabled);
  if (s.models.length === 0) items.push({ code: 'no_models', tone: 'bad', text: 'No models: start an engine or add one in Engines & models.' });
  else if (enabled.length === 0) items.push({ code: 'none_enabled', tone: 'bad', text: 'Every model is switched off: switch one on in the Models table.' });
  const unhealthy = enabled.filter((m) => m.health === 'unhealthy').map((m) => m.id);
  const degraded = enabled.filter((m) => m.health === 'degraded').map((m) => m.id);
  if (unhealthy.length) items.push({ code: 'unhealthy', tone: 'bad', text: `${unhealthy.length === 1 ? 'Model' : 'Models'} not answering: ${names(unhealthy)}.` });
  if (degraded.length) items.push({ code: 'degraded', tone: 'warn', text: `${degraded.length === 1 ? 'Model' : 'Models'} answering with errors: ${names(degraded)}.` });
  if (sample?.available) {
    const hot = sample.devices.filter((d) => d.temperatureC !== null && d.temperatureC >= HOT_GPU_C);
    for (const d of hot) items.push({ code: 'gpu_hot', tone: 'warn', text: `GPU ${d.index} is at ${Math.round(d.temperatureC!)} °C (${HOT_GPU_C} °C or more): check its cooling.` });
  }
  const { requests, errors } = s.today;
  if (requests > 0 && errors / requests >= FAILURE_RATE) {
    items.push({ code: 'failures', tone: 'warn', text: `${errors} of ${requests} requests failed today (${Math.round((errors / requests) * 1000) / 10} %): see Requests and Logs.` });
  }
  if (items.length === 0) {
    return { tone: 'ok', items, ok: `All is well: serving ${enabled.length} ${enabled.length === 1 ? 'model' : 'models'} to the Swan network.` };
  }
  return { tone: items.some((i) => i.tone === 'bad') ? 'bad' : 'warn', items };
}
