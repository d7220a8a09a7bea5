// RequestEvents with the real RequestBook: per-chunk book events become at most one request.text and
// one request.update per request per event-loop turn; status changes go out at once, after that
// request's pending text; with nobody listening nothing is built or scheduled.
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { RequestEvents } from '../../../src/core/bridge/request-events';
import { RequestBook } from '../../../src/core/inference/requests';
import type { BridgeEvent } from '../../../src/shared/bridge/events';

const turn = () => new Promise<void>((r) => setImmediate(r));

function wired() {
  const bus = new EventEmitter<{ bridge: [BridgeEvent] }>();
  const book = new RequestBook();
  const ev = new RequestEvents(
    (e) => bus.emit('bridge', e),
    () => bus.listenerCount('bridge') > 0,
  );
  book.on('update', (v) => ev.update(v));
  book.on('text', (id, d) => ev.text(id, d));
  const seen: BridgeEvent[] = [];
  const listen = () => {
    const cb = (e: BridgeEvent) => seen.push(e);
    bus.on('bridge', cb);
    return () => bus.off('bridge', cb);
  };
  return { book, ev, seen, listen, bus };
}

describe('RequestEvents', () => {
  it('joins many chunks of one turn into one text event, latest state after it', async () => {
    const { book, ev, seen, listen } = wired();
    listen();
    book.begin('r1', 'hub', 'm', true);
    book.running('r1', 'http://e');
    // Prompt: begin and running are sent before any turn passes.
    expect(seen.map((e) => e.type === 'request.update' && e.request.status)).toEqual(['queued', 'running']);
    const parts = Array.from({ length: 50 }, (_, i) => `t${i} `);
    for (const p of parts) book.appendText('r1', p);
    expect(seen).toHaveLength(2);
    await turn();
    const after = seen.slice(2);
    expect(after.map((e) => e.type)).toEqual(['request.text', 'request.update']);
    expect(after[0]).toEqual({ type: 'request.text', id: 'r1', delta: parts.join('') });
    expect(after[1]).toMatchObject({ type: 'request.update', request: { id: 'r1', status: 'running', tokensOut: 50 } });
    // A copy, not the book's live view.
    expect((after[1] as Extract<BridgeEvent, { type: 'request.update' }>).request).not.toBe(book.get('r1'));
    expect(ev.counters.flushes).toBe(1);
  });

  it('sends a finish at once, after the text still pending, with none of the older state', async () => {
    const { book, seen, listen } = wired();
    listen();
    book.begin('a', 'hub', 'm', true);
    book.begin('b', 'hub', 'm', true);
    book.running('a', 'e');
    book.running('b', 'e');
    seen.length = 0;
    book.appendText('a', 'Hel');
    book.appendText('b', 'x');
    book.appendText('a', 'lo');
    book.finish('a', { status: 'ok', tokensIn: 1, tokensOut: 2, estimated: false });
    expect(seen).toEqual([
      { type: 'request.text', id: 'a', delta: 'Hello' },
      expect.objectContaining({ type: 'request.update', request: expect.objectContaining({ id: 'a', status: 'ok', tokensOut: 2 }) }),
    ]);
    await turn();
    expect(
      seen
        .slice(2)
        .map((e) =>
          e.type === 'request.text' ? `text ${e.id} ${e.delta}` : e.type === 'request.update' ? `update ${e.request.id} ${e.request.status}` : e.type,
        ),
    ).toEqual(['text b x', 'update b running']);
    await turn();
    expect(seen).toHaveLength(4);
  });

  it('with nobody listening builds, copies and schedules nothing', async () => {
    const { book, ev, bus } = wired();
    expect(bus.listenerCount('bridge')).toBe(0);
    book.begin('r', 'hub', 'm', true);
    book.running('r', 'e');
    for (let i = 0; i < 20; i++) book.appendText('r', 'x');
    book.finish('r', { status: 'ok', tokensIn: 1, tokensOut: 20, estimated: false });
    await turn();
    expect(ev.counters).toEqual({ emitted: 0, coalesced: 0, skipped: 2 + 2 * 20 + 1, flushes: 0 });
  });

  it('drops what is pending when the last listener leaves before the turn ends', async () => {
    const { book, ev, seen, listen } = wired();
    const off = listen();
    book.begin('r', 'hub', 'm', true);
    book.running('r', 'e');
    book.appendText('r', 'x');
    off();
    await turn();
    expect(seen).toHaveLength(2);
    expect(ev.counters.emitted).toBe(2);
  });
});
