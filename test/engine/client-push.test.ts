// The engine client's push form (forEach): what the inference runner uses on the relay path. The same
// events as the iterator, in order; a handler's promise holds the stream (backpressure reaches the engine);
// a handler that throws closes the engine connection; an abort ends it as a cancellation.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { streamRequest } from '../../src/core/engine/client';
import type { EngineStreamEvent } from '../../src/core/engine/types';
import { generatedText, startTestEngine, type TestEngine, type TestEngineOptions } from '../support/engine-server';

let engines: TestEngine[] = [];
afterEach(async () => {
  await Promise.all(engines.map((e) => e.close()));
  engines = [];
});
async function start(opts?: TestEngineOptions): Promise<TestEngine> {
  const e = await startTestEngine(opts);
  engines.push(e);
  return e;
}
const chat = { model: 'public-name', messages: [{ role: 'user', content: 'hi' }] };
const textOf = (evs: EngineStreamEvent[]) => evs.map((e) => (e.type === 'chunk' ? e.text : '')).join('');

describe('streamRequest().forEach', () => {
  it('hands over the same events as the iterator, ending with one end', async () => {
    const e = await start({ mode: { generate: 500 } });
    const pulled: EngineStreamEvent[] = [];
    for await (const ev of await streamRequest({ endpoint: { url: e.url }, path: '/v1/chat/completions', body: chat })) pulled.push(ev);
    const pushed: EngineStreamEvent[] = [];
    await (await streamRequest({ endpoint: { url: e.url }, path: '/v1/chat/completions', body: chat })).forEach((ev) => void pushed.push(ev));
    expect(textOf(pushed)).toBe(generatedText(500));
    expect(pushed.map((x) => x.type)).toEqual(pulled.map((x) => x.type));
    expect(pushed.filter((x) => x.type === 'end')).toHaveLength(1);
    expect(pushed.at(-1)).toEqual(pulled.at(-1));
  });

  it("waits for a handler's promise: the engine is paused meanwhile and nothing is lost", async () => {
    const n = 100_000;
    const e = await start({ mode: { generate: n } });
    const stream = await streamRequest({ endpoint: { url: e.url }, path: '/v1/chat/completions', body: chat });
    let text = '';
    let hold: (() => void) | undefined;
    let seen = 0;
    const done = stream.forEach((ev) => {
      if (ev.type === 'chunk') text += ev.text;
      if (++seen === 5) return new Promise<void>((resolve) => (hold = resolve));
      return undefined;
    });
    await e.waitForBackpressure();
    const written = e.eventsWritten;
    await sleep(150); // a bounded quiet period: nothing to await for "no progress"
    expect(e.eventsWritten).toBe(written);
    expect(seen).toBe(5);
    hold!();
    await done;
    expect(text).toBe(generatedText(n));
  });

  it('a handler that throws rejects the walk and closes the engine connection', async () => {
    const e = await start({ mode: { generate: 10_000, delayMs: 1 } });
    const stream = await streamRequest({ endpoint: { url: e.url }, path: '/v1/chat/completions', body: chat });
    let n = 0;
    const walk = stream.forEach((ev) => {
      if (ev.type === 'chunk' && ++n === 3) throw new Error('sink broke');
    });
    await expect(walk).rejects.toThrow('sink broke');
    await e.waitForAbort(1);
    expect(e.requests[0]?.aborted).toBe(true);
  });

  it('an abort mid-stream ends it with a 499 error and one end', async () => {
    const e = await start({ mode: { stallAfterEvents: 2 } });
    const ac = new AbortController();
    const stream = await streamRequest({ endpoint: { url: e.url }, path: '/v1/chat/completions', body: chat, signal: ac.signal });
    const seen: EngineStreamEvent[] = [];
    const walk = stream.forEach((ev) => {
      seen.push(ev);
      if (ev.type === 'chunk') ac.abort();
    });
    await walk;
    expect(seen.filter((x) => x.type === 'error')).toEqual([{ type: 'error', message: `the request to the engine at ${e.url} was cancelled`, statusCode: 499 }]);
    expect(seen.at(-1)).toMatchObject({ type: 'end', truncated: true });
  });

  it('a silent engine fails after the idle timeout while the handler waits for it', async () => {
    const e = await start({ mode: { stallAfterEvents: 2 } });
    const seen: EngineStreamEvent[] = [];
    await (await streamRequest({ endpoint: { url: e.url }, path: '/v1/chat/completions', body: chat, idleTimeoutMs: 100 })).forEach((ev) => void seen.push(ev));
    expect(seen.find((x) => x.type === 'error')).toMatchObject({ statusCode: 502 });
    expect(seen.at(-1)).toMatchObject({ type: 'end' });
  });
});
