// RequestBook: bounded views (10,000) and texts (200 requests, 64 KB each), events, and finish()
// producing the ledger's UsageRecord with time to first token and tokens per second.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RequestBook } from '../../../src/core/inference/requests';
import type { RequestView, UsageRecord } from '../../../src/shared/types';

afterEach(() => {
  vi.useRealTimers();
});

describe('RequestBook', () => {
  it('begin -> running -> text -> finish, with an update event at each step', () => {
    const book = new RequestBook();
    const updates: string[] = [];
    const texts: Array<[string, string]> = [];
    book.on('update', (v) => updates.push(v.status));
    book.on('text', (id, delta) => texts.push([id, delta]));
    book.begin('r1', 'hub', 'm', true);
    book.running('r1', 'http://127.0.0.1:8000');
    book.appendText('r1', 'Hel');
    book.appendText('r1', '');
    book.appendText('r1', 'lo');
    expect(book.text('r1')).toBe('Hello');
    // live rows count about a token per chunk until the engine's usage arrives
    expect(book.get('r1')!.tokensOut).toBe(2);
    expect(texts).toEqual([
      ['r1', 'Hel'],
      ['r1', 'lo'],
    ]);
    const finished: Array<[UsageRecord, RequestView]> = [];
    book.on('finished', (r, v) => finished.push([r, v]));
    const rec = book.finish('r1', { status: 'ok', tokensIn: 3, tokensOut: 2, estimated: false });
    expect(rec).toBeDefined();
    expect(finished).toHaveLength(1);
    expect(finished[0]![0]).toBe(rec);
    expect(updates).toEqual(['queued', 'running', 'running', 'running', 'ok']);
    expect(book.get('r1')).toMatchObject({ status: 'ok', endpoint: 'http://127.0.0.1:8000', tokensIn: 3, tokensOut: 2, estimated: false });
  });

  it('finish() builds the UsageRecord: latency, ttft and tokens/s from the first token', () => {
    // Durations come from the monotonic clock (performance.now()), timestamps from the wall clock: both advance.
    vi.useFakeTimers({ toFake: ['Date', 'performance'] });
    vi.setSystemTime(10_000);
    const book = new RequestBook();
    book.begin('r', 'local', 'llama', true);
    book.running('r', 'http://e:1');
    vi.advanceTimersByTime(250);
    book.appendText('r', 'first');
    vi.advanceTimersByTime(150);
    book.appendText('r', ' second'); // not the first token: ttft stays
    vi.advanceTimersByTime(1850);
    const rec = book.finish('r', { status: 'ok', tokensIn: 12, tokensOut: 40, estimated: true });
    expect(rec).toEqual({
      requestId: 'r',
      source: 'local',
      model: 'llama',
      endpoint: 'http://e:1',
      startedAt: 10_000,
      finishedAt: 12_250,
      tokensIn: 12,
      tokensOut: 40,
      estimated: true,
      latencyMs: 2250,
      ttftMs: 250,
      tokensPerSecond: 20, // 40 tokens over the 2000 ms after the first token
      status: 'ok',
      statusCode: null,
      error: null,
    });
    expect(book.get('r')).toMatchObject({ firstTokenAt: 10_250, finishedAt: 12_250, latencyMs: 2250 });
  });

  it('a wall-clock step while it runs changes no duration: the row stays whole (finished = started + latency)', () => {
    vi.useFakeTimers({ toFake: ['Date', 'performance'] });
    vi.setSystemTime(50_000_000);
    const book = new RequestBook();
    book.begin('s', 'hub', 'm', true);
    vi.advanceTimersByTime(100);
    book.appendText('s', 'x');
    vi.setSystemTime(50_000_000 - 3_600_000); // an hour back, as an NTP step or a manual change does
    vi.advanceTimersByTime(900);
    const rec = book.finish('s', { status: 'ok', tokensIn: 1, tokensOut: 9, estimated: false });
    expect(rec).toMatchObject({ startedAt: 50_000_000, finishedAt: 50_001_000, latencyMs: 1000, ttftMs: 100, tokensPerSecond: 10 });
  });

  it('without a first token: ttft null, tokens/s over the whole latency; errors carried', () => {
    vi.useFakeTimers({ toFake: ['Date', 'performance'] });
    vi.setSystemTime(1000);
    const book = new RequestBook();
    book.begin('n', 'hub', 'm', false);
    vi.advanceTimersByTime(500);
    const rec = book.finish('n', { status: 'error', tokensIn: 5, tokensOut: 10, estimated: false, statusCode: 502, error: 'engine closed the connection' });
    expect(rec).toMatchObject({
      endpoint: '',
      ttftMs: null,
      tokensPerSecond: 20,
      latencyMs: 500,
      status: 'error',
      statusCode: 502,
      error: 'engine closed the connection',
    });
    expect(book.get('n')).toMatchObject({ status: 'error', statusCode: 502, error: 'engine closed the connection' });
  });

  it('no output tokens, or no time: tokens/s is null', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(1000);
    const book = new RequestBook();
    book.begin('a', 'hub', 'm', false);
    vi.setSystemTime(1100);
    expect(book.finish('a', { status: 'rejected', tokensIn: 0, tokensOut: 0, estimated: false })?.tokensPerSecond).toBeNull();
    book.begin('c', 'hub', 'm', false);
    expect(book.finish('c', { status: 'ok', tokensIn: 1, tokensOut: 5, estimated: false })?.tokensPerSecond).toBeNull();
  });

  it('finish twice is a no-op: undefined, no second event, the first outcome kept', () => {
    const book = new RequestBook();
    let events = 0;
    book.on('finished', () => events++);
    book.begin('r', 'hub', 'm', true);
    expect(book.finish('r', { status: 'cancelled', tokensIn: 1, tokensOut: 1, estimated: false })).toBeDefined();
    expect(book.finish('r', { status: 'ok', tokensIn: 9, tokensOut: 9, estimated: false })).toBeUndefined();
    expect(events).toBe(1);
    expect(book.get('r')).toMatchObject({ status: 'cancelled', tokensIn: 1 });
    expect(book.finish('never-begun', { status: 'ok', tokensIn: 0, tokensOut: 0, estimated: false })).toBeUndefined();
  });

  it('keeps the newest 10,000 views, never dropping one still running; list() is newest first and limited', () => {
    const book = new RequestBook();
    book.begin('running', 'hub', 'm', false);
    for (let i = 0; i < 10_001; i++) {
      book.begin(`r${i}`, 'hub', 'm', false);
      book.finish(`r${i}`, { status: 'ok', tokensIn: 1, tokensOut: 1, estimated: false });
    }
    expect(book.get('running')).toBeDefined();
    expect(book.get('r0')).toBeUndefined();
    expect(book.get('r1')).toBeUndefined();
    expect(book.get('r2')).toBeDefined();
    // the running request still gets its ledger record when it ends
    expect(book.finish('running', { status: 'ok', tokensIn: 1, tokensOut: 1, estimated: false })).toBeDefined();
    expect(book.list(10_000)).toHaveLength(10_000);
    expect(book.list(3).map((v) => v.id)).toEqual(['r10000', 'r9999', 'r9998']);
    expect(book.list()).toHaveLength(500);
  });

  it('keeps text for the newest 200 requests', () => {
    const book = new RequestBook();
    for (let i = 0; i < 201; i++) {
      book.begin(`r${i}`, 'hub', 'm', true);
      book.appendText(`r${i}`, `text ${i}`);
    }
    expect(book.text('r0')).toBe('');
    expect(book.text('r1')).toBe('text 1');
    expect(book.text('r200')).toBe('text 200');
    // Appending to a kept text does not evict anything.
    book.appendText('r1', '!');
    expect(book.text('r1')).toBe('text 1!');
    expect(book.text('r2')).toBe('text 2');
  });

  it('caps each text at 64 KB, also when one delta crosses the cap, and keeps emitting deltas', () => {
    const book = new RequestBook();
    book.begin('big', 'hub', 'm', true);
    let emitted = 0;
    book.on('text', (_id, d) => (emitted += d.length));
    book.appendText('big', 'a'.repeat(64 * 1024 - 10));
    book.appendText('big', 'b'.repeat(100));
    expect(book.text('big')).toHaveLength(64 * 1024);
    expect(book.text('big').endsWith('b'.repeat(10))).toBe(true);
    book.appendText('big', 'c');
    expect(book.text('big')).toHaveLength(64 * 1024);
    expect(emitted).toBe(64 * 1024 - 10 + 100 + 1);
  });

  it('text for an unknown request is empty; running/appendText on unknown ids do not throw', () => {
    const book = new RequestBook();
    book.running('ghost', 'http://x');
    expect(book.get('ghost')).toBeUndefined();
    expect(book.text('ghost')).toBe('');
  });
});
