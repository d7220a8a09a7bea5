// Retention of sent stream messages (resume-v1): replay after a seq, a byte cap that evicts the oldest
// request (and says which), and dropping finished requests once they are old enough.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Retention, type RetentionCodec } from '../../../src/core/hub/retention';
import { out, type Outbound } from '../../../src/core/protocol/messages';

const chunk = (id: string, seq: number): Outbound => out.streamChunk(id, seq, { choices: [{ delta: { content: `t${seq}` } }] }, false);

const json: RetentionCodec<Outbound> = { text: (m) => JSON.stringify(m), read: (text) => JSON.parse(text) as Outbound };

function retention(maxBytes: number): { r: Retention<Outbound>; evicted: string[] } {
  const evicted: string[] = [];
  return { r: new Retention<Outbound>(maxBytes, (id) => evicted.push(id), json), evicted };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('Retention', () => {
  it('since() returns the messages after lastSeq, in order', () => {
    const { r } = retention(1_000_000);
    for (let seq = 1; seq <= 5; seq++) r.add('a', seq, chunk('a', seq), 10);
    r.add('a', 6, out.streamEnd('a', 6, { latencyMs: 5, tokensIn: 1, tokensOut: 5 }), 10);
    expect(r.since('a', 3).map((m) => m.payload.seq)).toEqual([4, 5, 6]);
    expect(r.since('a', 0)).toHaveLength(6);
    expect(r.since('a', 6)).toEqual([]);
    expect(r.since('a', 3)[2]!.type).toBe('stream_end');
    expect(r.since('unknown', 0)).toEqual([]);
  });

  it('counts bytes and requests, and drop() gives the bytes back', () => {
    const { r } = retention(1_000_000);
    r.add('a', 1, chunk('a', 1), 100);
    r.add('a', 2, chunk('a', 2), 50);
    r.add('b', 1, chunk('b', 1), 30);
    expect(r.bytes).toBe(180);
    expect(r.size).toBe(2);
    expect(r.ids()).toEqual(['a', 'b']);
    expect(r.has('a')).toBe(true);
    r.drop('a');
    expect(r.bytes).toBe(30);
    expect(r.has('a')).toBe(false);
    expect(r.since('a', 0)).toEqual([]);
    r.drop('a'); // twice: no effect
    expect(r.bytes).toBe(30);
  });

  it('over the byte cap, the oldest request is evicted and onEvict is told', () => {
    const { r, evicted } = retention(1000);
    r.add('a', 1, chunk('a', 1), 400);
    r.add('b', 1, chunk('b', 1), 400);
    expect(evicted).toEqual([]);
    r.add('c', 1, chunk('c', 1), 400);
    expect(evicted).toEqual(['a']);
    expect(r.ids()).toEqual(['b', 'c']);
    expect(r.bytes).toBe(800);
  });

  it('evicts as many old requests as needed, oldest first', () => {
    const { r, evicted } = retention(1000);
    for (const id of ['a', 'b', 'c', 'd']) r.add(id, 1, chunk(id, 1), 200);
    r.add('e', 1, chunk('e', 1), 700);
    expect(evicted).toEqual(['a', 'b', 'c']);
    expect(r.ids()).toEqual(['d', 'e']);
    expect(r.bytes).toBe(900);
  });

  it('a single request larger than the whole cap is dropped and cancelled, never an unbounded buffer', () => {
    const { r, evicted } = retention(100);
    r.add('only', 1, chunk('only', 1), 80);
    expect(evicted).toEqual([]);
    r.add('only', 2, chunk('only', 2), 80);
    expect(evicted).toEqual(['only']);
    expect(r.ids()).toEqual([]);
    expect(r.bytes).toBe(0);
  });

  it('evicts finished requests before running ones', () => {
    const { r, evicted } = retention(100);
    r.add('running-old', 1, chunk('running-old', 1), 40);
    r.add('done', 1, chunk('done', 1), 40);
    r.finished('done');
    r.add('new', 1, chunk('new', 1), 40);
    expect(evicted).toEqual(['done']);
    expect(r.ids()).toEqual(['running-old', 'new']);
  });

  it('finished() marks a request; dropFinished() drops finished requests older than the limit only', () => {
    vi.useFakeTimers({ toFake: ['Date', 'performance'] });
    vi.setSystemTime(1_000_000);
    const { r, evicted } = retention(1_000_000);
    r.add('done-old', 1, chunk('done-old', 1), 10);
    r.add('done-new', 1, chunk('done-new', 1), 10);
    r.add('running', 1, chunk('running', 1), 10);
    r.finished('done-old');
    expect(r.isFinished('done-old')).toBe(true);
    expect(r.isFinished('running')).toBe(false);
    expect(r.isFinished('nope')).toBe(false);
    vi.advanceTimersByTime(5_000);
    r.finished('done-new');
    r.finished('nope'); // unknown id: no effect
    vi.advanceTimersByTime(1_000);
    r.dropFinished(5_000);
    expect(r.ids()).toEqual(['done-new', 'running']);
    expect(r.bytes).toBe(20);
    r.dropFinished(0);
    expect(r.ids()).toEqual(['running']);
    // Dropping is not eviction: nobody is asked to cancel anything.
    expect(evicted).toEqual([]);
  });
  it('gives back exactly what was kept, across buffer growth and after finished(): multi-byte text too', () => {
    const { r } = retention(100_000_000);
    const texts = Array.from({ length: 400 }, (_, i) => `t${i} ${'é€😀'.repeat(i % 7)} "quoted" \\ ${'x'.repeat(i * 3)}`);
    const msg = (seq: number): Outbound => out.streamChunk('a', seq, { choices: [{ delta: { content: texts[seq - 1] } }] }, false);
    for (let seq = 1; seq <= texts.length; seq++) r.add('a', seq, msg(seq), 1);
    const before = r.since('a', 0);
    r.finished('a');
    for (const got of [before, r.since('a', 0)]) {
      expect(got).toHaveLength(texts.length);
      expect(got.map((m) => m.payload.seq)).toEqual(texts.map((_, i) => i + 1));
      expect(got).toEqual(texts.map((_, i) => msg(i + 1)));
    }
    expect(r.since('a', 398).map((m) => m.payload.seq)).toEqual([399, 400]);
  });
  it("keeps a message in the codec's short form when it has one, and reads it back as the whole message", () => {
    const seen: boolean[] = [];
    const codec: RetentionCodec<{ seq: number; body: string }> = {
      text: (m) => JSON.stringify(m),
      short: (m) => (m.seq % 2 === 0 ? m.body : undefined),
      read: (text, seq, _bytes, _id, short) => (seen.push(short), short ? { seq, body: text } : (JSON.parse(text) as { seq: number; body: string })),
    };
    const r = new Retention(1_000_000, () => undefined, codec);
    const msgs = [1, 2, 3, 4].map((seq) => ({ seq, body: `b${seq}😀` }));
    for (const m of msgs) r.add('a', m.seq, m, 1);
    expect(r.since('a', 0)).toEqual(msgs);
    expect(seen).toEqual([false, true, false, true]);
    expect(r.since('a', 2)).toEqual(msgs.slice(2));
  });
  it('a finished or dropped request hands its working buffer to the next one without touching what stays kept', () => {
    const { r } = retention(100_000_000);
    const a = [1, 2, 3].map((seq) => chunk('a', seq));
    a.forEach((m, i) => r.add('a', i + 1, m, 1));
    r.finished('a'); // a's bytes now in a buffer of their own; its working buffer is free again
    r.add('gone', 1, chunk('gone', 1), 1);
    r.drop('gone'); // dropped while running: its buffer is free too
    const b = [1, 2, 3, 4].map((seq) => chunk('b', seq));
    const c = [1, 2].map((seq) => chunk('c', seq));
    b.forEach((m, i) => r.add('b', i + 1, m, 1));
    c.forEach((m, i) => r.add('c', i + 1, m, 1));
    expect(r.since('a', 0)).toEqual(a);
    expect(r.since('b', 0)).toEqual(b);
    expect(r.since('c', 0)).toEqual(c);
    expect(r.since('gone', 0)).toEqual([]);
  });
});
