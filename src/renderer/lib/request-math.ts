// Derived figures of a request as the list shows them.
import type { RequestView } from '../../shared/types';

export function latencyOf(r: RequestView, now = Date.now()): number | null {
  if (r.latencyMs !== undefined) return r.latencyMs;
  if (r.finishedAt) return r.finishedAt - r.startedAt;
  return r.status === 'running' || r.status === 'queued' ? now - r.startedAt : null;
}

/** Output tokens per second of generation (from the first token when known). */
export function tokensPerSecond(r: RequestView, now = Date.now()): number | null {
  if (r.tokensOut <= 0) return null;
  const from = r.firstTokenAt ?? r.startedAt;
  const to = r.finishedAt ?? now;
  const seconds = (to - from) / 1000;
  return seconds > 0.05 ? r.tokensOut / seconds : null;
}

/** How long it waited for a slot before the engine call began (null while still queued or when refused). */
export function queueWait(r: RequestView): number | null {
  return r.admittedAt !== undefined ? Math.max(0, r.admittedAt - r.startedAt) : null;
}

/** The engine's time to its first token, from admission (the queue wait is apart); from the start when admission is unknown. */
export function engineTtft(r: RequestView): number | null {
  if (r.firstTokenAt === undefined) return null;
  return Math.max(0, r.firstTokenAt - (r.admittedAt ?? r.startedAt));
}
