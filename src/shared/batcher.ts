// Batches bridge events for a transport (Electron IPC or the console WebSocket): at most one send per
// interval, never one message per token. Within a batch a newer snapshot replaces an older one, only the
// latest GPU sample is kept, a request's latest update takes the place of its first one, and text deltas of the
// same request are joined; everything else keeps its order.
import type { BridgeEvent } from './bridge/events';

export interface EventBatcher {
  push(event: BridgeEvent): void;
  /** Sends what is buffered now (no-op when empty). */
  flush(): void;
  /** Sends what is buffered and stops: later pushes are dropped. */
  close(): void;
}

/** Beyond this many buffered events a batch is sent early, so memory stays bounded under a flood. */
const MAX_BUFFERED = 5000;

export function createEventBatcher(send: (events: BridgeEvent[]) => void, intervalMs = 250): EventBatcher {
  // Replaced events become null and are dropped when the batch is sent: O(1) per push.
  let buffer: (BridgeEvent | null)[] = [];
  let live = 0;
  let snapshotAt = -1;
  let sampleAt = -1;
  const updateAt = new Map<string, number>();
  const textAt = new Map<string, number>();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let closed = false;

  const replace = (index: number): void => {
    if (index >= 0 && buffer[index]) {
      buffer[index] = null;
      live--;
    }
  };

  const append = (event: BridgeEvent): number => {
    buffer.push(event);
    live++;
    return buffer.length - 1;
  };

  const flush = (): void => {
    if (timer) {
      clearTimeout(timer);
      timer = undefined;
    }
    if (live === 0) {
      buffer = [];
      return;
    }
    const events = buffer.filter((e): e is BridgeEvent => e !== null);
    buffer = [];
    live = 0;
    snapshotAt = -1;
    sampleAt = -1;
    updateAt.clear();
    textAt.clear();
    send(events);
  };

  const push = (event: BridgeEvent): void => {
    if (closed) return;
    switch (event.type) {
      case 'snapshot':
        replace(snapshotAt);
        snapshotAt = append(event);
        break;
      case 'gpu.sample':
        replace(sampleAt);
        sampleAt = append(event);
        break;
      case 'request.update': {
        // The latest state takes the place of the first update, so a request still appears before its text.
        const at = updateAt.get(event.request.id);
        if (at !== undefined && buffer[at]) buffer[at] = event;
        else updateAt.set(event.request.id, append(event));
        break;
      }
      case 'request.text': {
        const at = textAt.get(event.id);
        const prev = at === undefined ? null : buffer[at];
        if (prev && prev.type === 'request.text') {
          // Join into the earlier entry (a new object: the caller's events are never mutated).
          buffer[at!] = { type: 'request.text', id: event.id, delta: prev.delta + event.delta };
        } else {
          textAt.set(event.id, append({ ...event }));
        }
        break;
      }
      default:
        append(event);
    }
    if (live >= MAX_BUFFERED) flush();
    else if (!timer) timer = setTimeout(flush, intervalMs);
  };

  return {
    push,
    flush,
    close(): void {
      flush();
      closed = true;
    },
  };
}
