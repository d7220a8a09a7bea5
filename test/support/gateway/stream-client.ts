// A stream-v1 consumer for tests: collects one request's deltas (acking each as it is consumed, like a
// well-behaved client) until its complete or error.
import { randomUUID } from 'node:crypto';
import type { JsonSocket, Msg } from './json-socket';
import { MODEL } from './rig';

export interface Collected {
  text: string;
  seqs: number[];
  deltas: Msg[];
  terminal: Msg;
  /** resume_token of the last delta consumed. */
  lastToken?: string;
}

export function startMsg(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: 'start',
    request_id: randomUUID(),
    model: MODEL,
    messages: [{ role: 'user', content: 'Tell me a joke' }],
    params: { max_tokens: 64 },
    ...over,
  };
}

/** Consumes `requestId` on `s` until its terminal message. `stopAfter` returns early (no terminal) after n deltas. */
export function collect(s: JsonSocket, requestId: string, o: { ack?: boolean; stopAfter?: number; timeoutMs?: number } = {}): Promise<Collected> {
  const out: Omit<Collected, 'terminal'> = { text: '', seqs: [], deltas: [] };
  const ack = o.ack ?? true;
  const consume = (m: Msg) => {
    out.deltas.push(m);
    out.seqs.push(m.seq as number);
    out.text += m.text_chunk as string;
    out.lastToken = m.resume_token as string;
    if (ack) s.send({ type: 'ack', request_id: requestId, seq: m.seq });
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`request ${requestId} did not end within ${o.timeoutMs ?? 10_000} ms; got ${out.deltas.length} deltas`)),
      o.timeoutMs ?? 10_000,
    );
    const finish = (v: Collected) => {
      clearTimeout(timer);
      s.onMessage = undefined;
      resolve(v);
    };
    // Messages that arrived before we started listening.
    const seen = s.messages.filter((m) => m.request_id === requestId);
    const handle = (m: Msg): boolean => {
      if (m.request_id !== requestId) return false;
      if (m.type === 'delta') {
        consume(m);
        if (o.stopAfter !== undefined && out.deltas.length >= o.stopAfter) {
          finish({ ...out, terminal: m });
          return true;
        }
      } else if (m.type === 'complete' || m.type === 'error') {
        finish({ ...out, terminal: m });
        return true;
      }
      return false;
    };
    for (const m of seen) if (handle(m)) return;
    s.onMessage = (m) => void handle(m);
  });
}
