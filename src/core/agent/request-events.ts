// Turns the RequestBook's events into the console's bridge events without per-chunk cost.
// The book emits 'update' and 'text' on every relayed chunk; the console needs neither that often.
// Here, per event-loop turn (one setImmediate flush): a request's text deltas are joined into one
// `request.text`, and a running request's updates become one `request.update` with its latest state.
// Status changes (queued, running, finished) go out at once, after that request's pending text, so the
// console sees the text in order and a request's final update after its last text. With nobody
// subscribed to the bridge nothing is copied, joined or scheduled.
import type { BridgeEvent } from '../../shared/bridge';
import type { RequestStatus, RequestView } from '../../shared/types';

interface Pending {
  text: string;
  view: RequestView | undefined;
}

export class RequestEvents {
  private readonly pending = new Map<string, Pending>();
  /** The status last sent per request still going, so a change of status is told at once. */
  private readonly sent = new Map<string, RequestStatus>();
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
      if (done) this.sent.delete(view.id);
      return;
    }
    const last = this.sent.get(view.id);
    if (!done && view.status === last) {
      const p = this.pending.get(view.id);
      if (p) {
        if (p.view) this.counters.coalesced++;
        p.view = view;
      } else this.pending.set(view.id, { text: '', view });
      this.schedule();
      return;
    }
    // A change of status: this request's pending text (and its older state) first, then the change.
    this.flushOne(view.id, false);
    if (done) this.sent.delete(view.id);
    else this.sent.set(view.id, view.status);
    this.send({ type: 'request.update', request: { ...view } });
  }

  /** A RequestBook 'text'. */
  text(id: string, delta: string): void {
    if (!this.listening()) {
      this.counters.skipped++;
      return;
    }
    const p = this.pending.get(id);
    if (p) {
      if (p.text) this.counters.coalesced++;
      p.text += delta;
    } else this.pending.set(id, { text: delta, view: undefined });
    this.schedule();
  }

  /** Sends everything pending now (also what the setImmediate does). */
  flush(): void {
    this.scheduled = false;
    if (this.pending.size === 0) return;
    this.counters.flushes++;
    if (!this.listening()) {
      this.counters.skipped += this.pending.size;
      this.pending.clear();
      return;
    }
    for (const id of [...this.pending.keys()]) this.flushOne(id, true);
  }

  private flushOne(id: string, withView: boolean): void {
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    if (p.text) this.send({ type: 'request.text', id, delta: p.text });
    // On a change of status the new state replaces the pending one, so only a flush sends it.
    if (withView && p.view) this.send({ type: 'request.update', request: { ...p.view } });
    else if (p.view) this.counters.coalesced++;
  }

  private send(event: BridgeEvent): void {
    this.counters.emitted++;
    this.emit(event);
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }
}
