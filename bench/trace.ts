// What one stream looked like from the reader's side: when it was asked for, when its first chunk
// arrived, and for every stamped chunk how long it took from the engine's write to the reader.
import { nowMs } from './bench-engine';

export interface StreamTrace {
  sentAt: number;
  firstAt?: number;
  endAt?: number;
  /** Chunks received (stamped or not, [DONE] / done markers excluded). */
  chunks: number;
  /** ms from the engine writing each stamped chunk to the reader having it parsed. */
  latencies: number[];
  /** When the engine wrote each stamped chunk (our clock, ms): with its latency, the span the chunk was on its way. */
  writtenAt: number[];
  error?: string;
}

export function newTrace(): StreamTrace {
  return { sentAt: nowMs(), chunks: 0, latencies: [], writtenAt: [] };
}

/** Records a received chunk; `offsetMs` is the engine clock minus ours. */
export function recordChunk(trace: StreamTrace, chunk: unknown, offsetMs: number): void {
  const at = nowMs();
  trace.firstAt ??= at;
  trace.chunks++;
  const t = (chunk as { t?: unknown } | null)?.t;
  if (typeof t !== 'number') return;
  const written = t - offsetMs;
  trace.latencies.push(at - written);
  trace.writtenAt.push(written);
}

export function ttft(trace: StreamTrace): number {
  return (trace.firstAt ?? Number.NaN) - trace.sentAt;
}

/** The body every bench request sends: a streaming chat request for `chunks` tokens. */
export function benchRequest(chunks: number): Record<string, unknown> {
  return { model: 'bench', messages: [{ role: 'user', content: 'Count for the bench.' }], stream: true, max_tokens: chunks };
}
