// Drives a provider through the dev hub the way the hub does: sends `inference` frames on the
// provider's own hub socket and follows its stream_chunk / stream_end replies, timing each stamped
// chunk at the moment the hub has it parsed (the dev hub's 'message' event).
import crypto from 'node:crypto';
import type { DevHub, DevProvider } from '../src/cli/dev-hub';
import { nowMs } from './bench-engine';
import { benchRequest, newTrace, recordChunk, type StreamTrace } from './trace';

interface Pending {
  trace: StreamTrace;
  resolve: (t: StreamTrace) => void;
  timer: NodeJS.Timeout;
}

interface HubMessage {
  type: string;
  payload: Record<string, unknown>;
  requestId?: string;
}

export class HubDriver {
  private readonly pending = new Map<string, Pending>();
  private readonly onMessage = (m: HubMessage): void => this.handle(m);
  /** stream_chunk messages received for our requests (done markers excluded). */
  relayed = 0;

  constructor(
    private readonly hub: DevHub,
    private readonly offsetMs: number,
  ) {
    hub.events.on('message', this.onMessage);
  }

  provider(nodeName: string): DevProvider {
    const p = this.hub.providers().find((x) => x.nodeName === nodeName && x.connected && x.ws);
    if (!p) throw new Error(`provider ${nodeName} is not connected to the hub`);
    return p;
  }

  /** One streaming request of `chunks` tokens to the provider named `nodeName`. */
  stream(nodeName: string, chunks: number, timeoutMs = 120_000): Promise<StreamTrace> {
    const p = this.provider(nodeName);
    const id = crypto.randomUUID();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${nodeName}: stream ${id} not finished within ${timeoutMs} ms`));
      }, timeoutMs);
      const trace = newTrace();
      this.pending.set(id, { trace, resolve, timer });
      p.ws?.send(
        JSON.stringify({ type: 'inference', request_id: id, payload: { endpoint_id: id, model_id: 'bench', stream: true, request: benchRequest(chunks) } }),
      );
    });
  }

  close(): void {
    this.hub.events.off('message', this.onMessage);
    for (const p of this.pending.values()) clearTimeout(p.timer);
    this.pending.clear();
  }

  private handle(m: HubMessage): void {
    const id = String(m.payload.request_id ?? m.requestId ?? '');
    const p = this.pending.get(id);
    if (!p) return;
    if (m.type === 'stream_chunk') {
      if (m.payload.done === true || m.payload.chunk === null) return;
      this.relayed++;
      recordChunk(p.trace, m.payload.chunk, this.offsetMs);
      return;
    }
    if (m.type === 'stream_end' || m.type === 'error') {
      clearTimeout(p.timer);
      this.pending.delete(id);
      p.trace.endAt = nowMs();
      if (m.payload.error !== undefined || m.type === 'error') p.trace.error = String(m.payload.error ?? m.payload.message ?? 'error');
      // The dev hub keeps every message for tests; the bench does not need them.
      if (this.hub.received.length > 10_000) this.hub.received.length = 0;
      p.resolve(p.trace);
    }
  }
}
