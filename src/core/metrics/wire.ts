// Which of the agent's events feed the metrics: a finished request (the request book, once per request,
// never per chunk), a GPU sample, the hub link's registrations and disconnects. The Agent calls this once
// when metrics are on (`run --metrics`).
import type { GpuSampler } from '../gpu/sampler';
import type { HubLink } from '../hub/link';
import type { Ledger } from '../ledger/ledger';
import type { RequestBook } from '../inference/requests';
import type { AgentMetrics } from './agent-metrics';

export function wireMetrics(p: { book: RequestBook; link: HubLink; sampler?: GpuSampler; ledger?: Ledger }, metrics: AgentMetrics): void {
  p.book.on('finished', (record, view) => metrics.onFinished(record, view, p.ledger?.earningOf(record) ?? 0));
  p.sampler?.on('sample', (sample) => metrics.onSample(sample));
  p.link.on('registered', () => metrics.onRegistered());
  p.link.on('disconnected', (_reason, code) => metrics.onDisconnected(code));
}
