// Turns the RequestBook's events into the console's bridge events without per-chunk cost.
// The book emits 'update' and 'text' on every relayed chunk; the console needs neither that often.
// Here, per event-loop turn (one setImmediate flush): a request's text deltas are joined into one
// `request.text`, and a running request's updates become one `request.update` with its latest state.
// Status changes (queued, running, finished) go out at once, after that request's pending text, so the
// console sees the text in order and a request's final update after its last text. With nobody
// subscribed to the bridge nothing is copied, joined or scheduled.
import type { BridgeEvent } from '../../shared/bridge/events';
import type { RequestStatus, RequestView } from '../../shared/types';

/** Per request still going: the status last sent, and what waits for the turn's flush. */
interface Live {
  status: RequestStatus | undefined;
  text: string;
  view: RequestView | undefined;
  queued: boolean;
}

export class RequestEvents {
  private readonly live = new Map<string, Live>();
  private queue: string[] = [];
  private scheduled = false;
  /** emitted: bridge events sent; coalesced: book events folded into a later one; skipped: none listening. */
  readonly counters = { emitted: 0, coalesced: 0, skipped: 0, flushes: 0 };

  constructor(
    private readonly emit: (event: BridgeEvent) => void,
    private readonly listening: () => boolean,
  ) {}

  /** A RequestBook 'update'. */
  update(view: RequestView): void {
    const done = view.finishedAt !== undefined;
    if (!this.listening()) {
      this.counters.skipped++;
      if (done) this.live.delete(view.id);
      return;
    }
    let s = this.live.get(view.id);
    if (!done && s !== undefined && view.status === s.status) {
      if (s.view) this.counters.coalesced++;
      s.view = view;
      this.enqueue(view.id, s);
      return;
    }
    // A change of status: this request's pending text (and its older state) first, then the change.
    if (s !== undefined) this.send(view.id, s, false);
    if (done) this.live.delete(view.id);
    else if (s === undefined) this.live.set(view.id, (s = { status: view.status, text: '', view: undefined, queued: false }));
    else s.status = view.status;
    this.counters.emitted++;
    this.emit({ type: 'request.update', request: { ...view } });
  }

  /** A RequestBook 'text'. */
  text(id: string, delta: string): void {
    if (!this.listening()) {
      this.counters.skipped++;
      return;
    }
    let s = this.live.get(id);
    if (s === undefined) this.live.set(id, (s = { status: undefined, text: '', view: undefined, queued: false }));
    if (s.text) this.counters.coalesced++;
    s.text += delta;
    this.enqueue(id, s);
  }

  /** Sends everything pending now (also what the setImmediate does). */
  flush(): void {
    this.scheduled = false;
    const q = this.queue;
    if (q.length === 0) return;
    this.queue = [];
    this.counters.flushes++;
    const hear = this.listening();
    for (const id of q) {
      const s = this.live.get(id);
      if (s === undefined) continue;
      s.queued = false;
      if (hear) this.send(id, s, true);
      else if (s.text || s.view) {
        this.counters.skipped++;
        s.text = '';
        s.view = undefined;
      }
    }
  }

  /** Sends a request's pending text, and its pending state when withView (a change of status replaces it). */
  private send(id: string, s: Live, withView: boolean): void {
    if (s.text) {
      this.counters.emitted++;
      this.emit({ type: 'request.text', id, delta: s.text });
      s.text = '';
    }
    if (s.view) {
      if (withView) {
        this.counters.emitted++;
        this.emit({ type: 'request.update', request: { ...s.view } });
      } else this.counters.coalesced++;
      s.view = undefined;
    }
  }

  private enqueue(id: string, s: Live): void {
    if (!s.queued) {
      s.queued = true;
      this.queue.push(id);
    }
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }
}
