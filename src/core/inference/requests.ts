// RequestBook: the recent requests as the console shows them, and the streaming text of the newest
// ones. Bounded: the newest MAX_VIEWS views, and text for the newest MAX_TEXTS requests.
import { EventEmitter } from 'node:events';
import type { RequestPurpose, RequestSource, RequestView, UsageRecord } from '../../shared/types';
import { elapsedMs, monoMs } from '../base/clock';

const MAX_VIEWS = 10_000;
const MAX_TEXTS = 200;
const MAX_TEXT_CHARS = 64 * 1024;

export interface RequestBookEvents {
  update: [RequestView];
  text: [string, string];
  finished: [UsageRecord, RequestView];
}

/**
 * A request's text as its deltas, joined when it is read and when the request ends. Appending to one string
 * per chunk would keep a chain of one small string object per chunk alive for as long as the text is kept,
 * which every minor GC under load copies and then promotes (seen in heap snapshots under the bench's load).
 */
interface TextParts {
  parts: string[];
  chars: number;
}

/** A request's start and first token on the monotonic clock: its durations never read the wall clock. */
interface Marks {
  start: number;
  firstToken?: number;
}

export class RequestBook extends EventEmitter<RequestBookEvents> {
  private readonly views = new Map<string, RequestView>();
  private readonly texts = new Map<string, TextParts>();
  private readonly marks = new Map<string, Marks>();

  begin(id: string, source: RequestSource, model: string, stream: boolean, purpose?: RequestPurpose): RequestView {
    const view: RequestView = {
      id,
      source,
      ...(purpose ? { purpose } : {}),
      model,
      stream,
      status: 'queued',
      startedAt: Date.now(),
      tokensIn: 0,
      tokensOut: 0,
      estimated: false,
    };
    this.views.set(id, view);
    this.marks.set(id, { start: monoMs() });
    if (this.views.size > MAX_VIEWS) this.evictOne();
    this.emit('update', view);
    return view;
  }

  running(id: string, endpoint: string): void {
    this.patch(id, { status: 'running', endpoint, admittedAt: Date.now() });
  }

  appendText(id: string, delta: string): void {
    if (!delta) return;
    const view = this.views.get(id);
    // A running count (about a token per chunk) so live rows show progress; finish() sets the real one.
    // (In place, as patch() does, without a patch object per chunk.)
    if (view) {
      view.tokensOut++;
      if (view.firstTokenAt === undefined) {
        view.firstTokenAt = Date.now();
        const m = this.marks.get(id);
        if (m) m.firstToken = monoMs();
      }
      this.emit('update', view);
    }
    let text = this.texts.get(id);
    if (text === undefined) {
      if (this.texts.size >= MAX_TEXTS) this.texts.delete(this.texts.keys().next().value as string);
      text = { parts: [], chars: 0 };
      this.texts.set(id, text);
    }
    // Capped exactly: a long delta near the cap is cut, not kept whole.
    const room = MAX_TEXT_CHARS - text.chars;
    if (room > 0) {
      const piece = delta.length <= room ? delta : delta.slice(0, room);
      text.parts.push(piece);
      text.chars += piece.length;
    }
    this.emit('text', id, delta);
  }

  /** Ends a request; returns the record the ledger stores. */
  finish(
    id: string,
    f: { status: 'ok' | 'error' | 'cancelled' | 'rejected'; tokensIn: number; tokensOut: number; estimated: boolean; statusCode?: number; error?: string },
  ): UsageRecord | undefined {
    const view = this.views.get(id);
    if (!view || view.finishedAt !== undefined) return undefined;
    this.joinText(id);
    // Durations on the monotonic clock; the finish time is the start the owner read plus that duration, so a
    // row stays whole (finished after started, latency >= 0) when the wall clock steps while it runs.
    const now = monoMs();
    const marks = this.marks.get(id) ?? { start: now };
    this.marks.delete(id);
    const latencyMs = elapsedMs(marks.start, now);
    const finishedAt = view.startedAt + latencyMs;
    this.patch(id, {
      status: f.status,
      finishedAt,
      latencyMs,
      tokensIn: f.tokensIn,
      tokensOut: f.tokensOut,
      estimated: f.estimated,
      ...(f.statusCode !== undefined ? { statusCode: f.statusCode } : {}),
      ...(f.error !== undefined ? { error: f.error } : {}),
    });
    const ttftMs = marks.firstToken !== undefined ? elapsedMs(marks.start, marks.firstToken) : null;
    const genMs = marks.firstToken !== undefined ? elapsedMs(marks.firstToken, now) : latencyMs;
    const record: UsageRecord = {
      requestId: id,
      source: view.source,
      model: view.model,
      endpoint: view.endpoint ?? '',
      startedAt: view.startedAt,
      finishedAt,
      tokensIn: f.tokensIn,
      tokensOut: f.tokensOut,
      estimated: f.estimated,
      latencyMs,
      ttftMs,
      tokensPerSecond: f.tokensOut > 0 && genMs > 0 ? (f.tokensOut * 1000) / genMs : null,
      status: f.status,
      statusCode: f.statusCode ?? null,
      error: f.error ?? null,
    };
    this.emit('finished', record, view);
    return record;
  }

  list(limit = 500): RequestView[] {
    const all = [...this.views.values()];
    return all.slice(Math.max(0, all.length - limit)).reverse();
  }

  text(id: string): string {
    return this.joinText(id);
  }

  /** The request's text as one string, which then replaces its deltas. */
  private joinText(id: string): string {
    const t = this.texts.get(id);
    if (!t) return '';
    if (t.parts.length > 1) t.parts = [t.parts.join('')];
    return t.parts[0] ?? '';
  }

  get(id: string): RequestView | undefined {
    return this.views.get(id);
  }

  /** Drops the oldest finished view; running ones stay so their ledger record is never lost. */
  private evictOne(): void {
    for (const [key, v] of this.views) {
      if (v.finishedAt !== undefined) {
        this.views.delete(key);
        this.marks.delete(key);
        return;
      }
    }
  }

  /** The amount the ledger booked for a finished request, shown with it. */
  setEarnings(id: string, earnings: number): void {
    this.patch(id, { earnings });
  }

  private patch(id: string, p: Partial<RequestView>): void {
    const view = this.views.get(id);
    if (!view) return;
    Object.assign(view, p);
    this.emit('update', view);
  }
}
