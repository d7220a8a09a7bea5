// Holds pushed event batches until the renderer says it listens (`swan:ready`), so nothing is sent into
// a page that is still loading. Pure: src/main/ipc.ts gives it the real send.
import type { BridgeEvent } from '../shared/bridge/events';

export interface EventGate {
  /** A batch from the batcher: delivered now when ready, held (bounded) otherwise. */
  push(batch: BridgeEvent[]): void;
  /** The renderer subscribed (true) or its page is going away (false). */
  setReady(ready: boolean): void;
  readonly ready: boolean;
  /** Events held while not ready. */
  readonly pending: number;
  close(): void;
}

/** Events kept while the page loads; older ones go first (the page asks for a fresh snapshot anyway). */
export const MAX_PENDING_EVENTS = 2000;

export function createEventGate(deliver: (batch: BridgeEvent[]) => void, maxPending = MAX_PENDING_EVENTS): EventGate {
  let ready = false;
  let closed = false;
  let held: BridgeEvent[] = [];

  const hold = (batch: BridgeEvent[]): void => {
    // Only the newest snapshot matters to a page that has not seen any.
    if (batch.some((e) => e.type === 'snapshot')) held = held.filter((e) => e.type !== 'snapshot');
    held.push(...batch);
    if (held.length > maxPending) held = held.slice(held.length - maxPending);
  };

  return {
    push(batch) {
      if (closed || batch.length === 0) return;
      if (ready) deliver(batch);
      else hold(batch);
    },
    setReady(next) {
      if (closed) return;
      ready = next;
      if (ready && held.length > 0) {
        const batch = held;
        held = [];
        deliver(batch);
      }
    },
    get ready() {
      return ready;
    },
    get pending() {
      return held.length;
    },
    close() {
      closed = true;
      ready = false;
      held = [];
    },
  };
}
