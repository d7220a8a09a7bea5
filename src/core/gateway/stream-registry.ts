// Every stream-v1 request the gateway keeps, by (key name, request_id): running ones, ones whose client
// is away (kept for the resume TTL, generation continuing within the retention cap), and finished ones
// (kept for the TTL so a resume or a repeated start still finds them). Memory is bounded by a total
// byte cap: finished requests nobody is attached to are dropped first, oldest first.
import type { Logger } from '../base/log';
import type { KeyIdentity } from './keys';
import { StreamState, type StreamConn, type StreamLimits } from './stream-state';

export interface StreamRegistryOptions {
  limits: StreamLimits;
  ttlMs: number;
  maxRetainedBytes: number;
  log: Logger;
  onAckTimeout(state: StreamState, conn: StreamConn): void;
}

export class StreamRegistry {
  private readonly states = new Map<string, StreamState>();
  private readonly timers = new Map<StreamState, NodeJS.Timeout>();
  private total = 0;
  private evictQueued = false;

  constructor(private readonly o: StreamRegistryOptions) {}

  private static id(keyId: string, requestId: string): string {
    return `${keyId}\n${requestId}`;
  }

  /** The request `requestId` of the key with this id (its hash; names can be reused). */
  get(keyId: string, requestId: string): StreamState | undefined {
    return this.states.get(StreamRegistry.id(keyId, requestId));
  }

  create(key: KeyIdentity, requestId: string, model: string): StreamState {
    const state = new StreamState(
      key.name,
      requestId,
      model,
      this.o.limits,
      {
        onBytes: (d) => this.onBytes(d),
        overGlobalCap: () => this.total > this.o.maxRetainedBytes,
        onAckTimeout: (s, c) => this.o.onAckTimeout(s, c),
      },
      key.id,
    );
    this.states.set(StreamRegistry.id(key.id, requestId), state);
    return state;
  }

  /** Cancels and forgets every request of a key that is no longer valid; returns how many. */
  dropRevoked(isValid: (keyId: string) => boolean): number {
    let n = 0;
    for (const s of [...this.states.values()]) {
      if (isValid(s.keyId)) continue;
      this.o.log.info(`stream ${s.requestId}: its API key was revoked; cancelling it`, { requestId: s.requestId });
      this.remove(s, 'the API key was revoked');
      n++;
    }
    return n;
  }

  /** Re-arms the expiry of a state after it was attached, detached or finished. */
  schedule(state: StreamState): void {
    const old = this.timers.get(state);
    if (old) clearTimeout(old);
    this.timers.delete(state);
    const from = state.finishedAt ?? (state.attachedTo ? undefined : state.detachedAt);
    if (from === undefined) return;
    const t = setTimeout(() => this.expire(state), Math.max(0, from + this.o.ttlMs - Date.now()));
    t.unref();
    this.timers.set(state, t);
  }

  remove(state: StreamState, reason: string): void {
    const id = StreamRegistry.id(state.keyId, state.requestId);
    if (this.states.get(id) === state) this.states.delete(id);
    const t = this.timers.get(state);
    if (t) clearTimeout(t);
    this.timers.delete(state);
    state.close(reason);
  }

  get size(): number {
    return this.states.size;
  }

  get retainedBytes(): number {
    return this.total;
  }

  close(): void {
    for (const s of [...this.states.values()]) this.remove(s, 'the gateway is shutting down');
  }

  private expire(state: StreamState): void {
    this.timers.delete(state);
    if (!state.finished) {
      this.o.log.info(`stream ${state.requestId}: the client did not come back within ${Math.round(this.o.ttlMs / 1000)} s; cancelling it`, {
        requestId: state.requestId,
      });
    }
    this.remove(state, 'the client did not resume in time');
  }

  private onBytes(delta: number): void {
    const wasOver = this.total > this.o.maxRetainedBytes;
    this.total += delta;
    if (delta > 0 && this.total > this.o.maxRetainedBytes && !this.evictQueued) {
      // Not re-entrant: the stream that grew is in the middle of adding a message.
      this.evictQueued = true;
      queueMicrotask(() => {
        this.evictQueued = false;
        this.evictAbandoned();
      });
    }
    if (wasOver && this.total <= this.o.maxRetainedBytes) for (const s of this.states.values()) s.notify();
  }

  /** Drops finished streams nobody is attached to, oldest first, until under the cap. */
  private evictAbandoned(): void {
    const abandoned = [...this.states.values()].filter((s) => s.finished && !s.attachedTo).sort((a, b) => (a.finishedAt ?? 0) - (b.finishedAt ?? 0));
    for (const s of abandoned) {
      if (this.total <= this.o.maxRetainedBytes) break;
      this.o.log.info(`stream ${s.requestId}: dropped from resume retention (memory cap reached)`, { requestId: s.requestId });
      this.remove(s, 'dropped from retention');
    }
  }
}
