// The engine client against a real test engine on 127.0.0.1.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { estimateTokens, prepareBody, requestJson, streamRequest, type EngineStream } from '../../../src/core/engine-client/client';
import { EngineHttpError, type EngineStreamEvent } from '../../../src/core/engine-client/types';
import { generatedText, startTestEngine, type TestEngine, type TestEngineOptions } from '../../support/engine-server';
import { readTrace } from '../../support/traces';

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

async function drain(stream: EngineStream): Promise<EngineStreamEvent[]> {
  const out: EngineStreamEvent[] = [];
  await stream.consume((ev) => void out.push(ev));
  return out;
}
const textOf = (evs: EngineStreamEvent[]) => evs.map((e) => (e.type === 'chunk' ? e.text : '')).join('');

async function rejection(p: Promise<unknown>): Promise<EngineHttpError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(EngineHttpError);
    return e as EngineHttpError;
  }
  throw new Error('expected the promise to reject');
}

const chat = { model: 'public-name', messages: [{ role: 'user', content: 'hi' }] };

/** The engine stopped writing before the end of its `n` events, blocked on a full socket, and stays so. */
async function expectHeldBack(e: TestEngine, n: number): Promise<void> {
  await e.waitForBackpressure();
  const written = e.eventsWritten;
  // Nothing to await for "no progress": observe a bounded quiet period instead.
  await sleep(150);
  expect(e.eventsWritten).toBe(written);
  expect(e.waitingForDrain).toBe(true);
  expect(written).toBeLessThan(n);
}

describe('prepareBody', () => {
  it('substitutes local_model and forces stream options without touching the input', () => {
    const input = { ...chat, stream: false, stream_options: { continuous_usage_stats: true } };
    const out = prepareBody(input, { url: 'http://x', localModel: 'local' }, true);
    expect(out).toEqual({ ...chat, model: 'local', stream: true, stream_options: { continuous_usage_stats: true, include_usage: true } });
    expect(input.stream).toBe(false);
    expect(prepareBody({ ...chat, stream: true, stream_options: { include_usage: true } }, { url: 'http://x' }, false)).toEqual({ ...chat, stream: false });
  });
});

describe('streamRequest', () => {
  it('streams a trace with local_model, Bearer key and forced usage', async () => {
    const e = await start({ apiKey: 'sk-engine', models: ['local-qwen'], strictModels: true });
    const gen = await streamRequest({
      endpoint: { url: `${e.url}/v1/`, localModel: 'local-qwen', apiKey: 'sk-engine' },
      path: '/v1/chat/completions',
      body: chat,
    });
    const events = await drain(gen);
    expect(textOf(events)).toBe('Okay. Sure.');
    expect(events.at(-1)).toEqual({ type: 'end', sawDone: true, truncated: false });
    const rec = e.requests[0];
    expect(rec?.headers.authorization).toBe('Bearer sk-engine');
    expect(rec?.body).toEqual({ ...chat, model: 'local-qwen', stream: true, stream_options: { include_usage: true } });
  });

  it('uses choices[].text and usage on /v1/completions', async () => {
    const e = await start();
    const events = await drain(await streamRequest({ endpoint: { url: e.url }, path: '/v1/completions', body: { model: 'm', prompt: 'x' } }));
    expect(textOf(events)).toBe("! I'm a student");
    expect(events.at(-1)).toMatchObject({ type: 'end', usage: { promptTokens: 12, completionTokens: 5 } });
    expect(e.requests[0]?.path).toBe('/v1/completions');
  });

  it('a missing key is the engine 401 with its message', async () => {
    const e = await start({ apiKey: 'sk-engine' });
    const err = await rejection(streamRequest({ endpoint: { url: e.url }, path: '/v1/chat/completions', body: chat }));
    expect(err.statusCode).toBe(401);
    expect(err.message).toBe('Unauthorized');
  });

  it('an HTTP error before the first byte carries the engine message and body', async () => {
    const body = JSON.parse(readTrace('openai-error-model-not-found.json').toString('utf8')) as unknown;
    const e = await start({ mode: { status: 404, body } });
    const err = await rejection(streamRequest({ endpoint: { url: e.url }, path: '/v1/chat/completions', body: chat }));
    expect(err.statusCode).toBe(404);
    expect(err.message).toBe('The model `gpt-4.1-nano-wrong` does not exist or you do not have access to it.');
    expect(err.body).toEqual(body);
    await e.setMode({ status: 422, body: { detail: [{ msg: 'field required', loc: ['body', 'messages'] }] } });
    const v = await rejection(streamRequest({ endpoint: { url: e.url }, path: '/v1/chat/completions', body: chat }));
    expect([v.statusCode, v.message]).toEqual([422, 'field required']);
    await e.setMode({ status: 503, body: '<html><body>busy</body></html>' });
    const h = await rejection(streamRequest({ endpoint: { url: e.url }, path: '/v1/chat/completions', body: chat }));
    expect([h.statusCode, h.message]).toEqual([503, `the engine at ${e.url} answered 503 Service Unavailable`]);
  });

  it('an unreachable engine is 502 naming the URL', async () => {
    const e = await start();
    await e.setMode('down');
    const err = await rejection(streamRequest({ endpoint: { url: e.url }, path: '/v1/chat/completions', body: chat }));
    expect(err.statusCode).toBe(502);
    expect(err.message).toContain(`could not reach the engine at ${e.url} (ECONNREFUSED)`);
  });

  it('a bad endpoint URL is a 502 with the address named', async () => {
    const err = await rejection(streamRequest({ endpoint: { url: 'ftp://x' }, path: '/v1/chat/completions', body: chat }));
    expect([err.statusCode, err.message]).toEqual([502, 'the engine address "ftp://x" is not usable: engine URL must start with http:// or https://: ftp://x']);
  });

  it('an engine that never answers is 504 after the headers timeout', async () => {
    const e = await start({ mode: 'hang' });
    const err = await rejection(streamRequest({ endpoint: { url: e.url }, path: '/v1/chat/completions', body: chat, headersTimeoutMs: 150 }));
    expect(err.statusCode).toBe(504);
    expect(err.message).toBe(`the engine at ${e.url} did not answer within 0.2 s`);
    await e.waitForAbort(1); // the engine saw the connection close
  });

  it('a drop mid-stream yields an error 502 and a truncated end', async () => {
    const e = await start({ mode: { dropAfterEvents: 3 } });
    const events = await drain(await streamRequest({ endpoint: { url: e.url }, path: '/v1/chat/completions', body: chat }));
    expect(textOf(events)).toBe('Okay.');
    const err = events.find((x) => x.type === 'error');
    expect(err).toMatchObject({ type: 'error', statusCode: 502 });
    expect(events.at(-1)).toEqual({ type: 'end', sawDone: false, truncated: true });
  });

  it('garbage data lines become error events', async () => {
    const e = await start({ mode: 'garbage' });
    const events = await drain(await streamRequest({ endpoint: { url: e.url }, path: '/v1/chat/completions', body: chat }));
    expect(events.filter((x) => x.type === 'error')).toHaveLength(2);
    expect(events.at(-1)).toMatchObject({ type: 'end', sawDone: true });
  });

  it('abort via the signal reaches the engine mid-stream', async () => {
    const e = await start({ mode: { stallAfterEvents: 2 } });
    const ac = new AbortController();
    const stream = await streamRequest({ endpoint: { url: e.url }, path: '/v1/chat/completions', body: chat, signal: ac.signal });
    const events: EngineStreamEvent[] = [];
    await stream.consume((ev) => {
      events.push(ev);
      if (events.length === 1) ac.abort();
    });
    await e.waitForAbort(1);
    expect(events[0]).toMatchObject({ type: 'chunk' });
    expect(events.filter((x) => x.type === 'error')).toEqual([
      { type: 'error', message: `the request to the engine at ${e.url} was cancelled`, statusCode: 499 },
    ]);
    expect(events.at(-1)).toMatchObject({ type: 'end', truncated: true });
  });

  it('close() from the handler stops reading and aborts the engine request', async () => {
    const e = await start({ mode: { generate: 10_000, delayMs: 1 } });
    const stream = await streamRequest({ endpoint: { url: e.url }, path: '/v1/chat/completions', body: chat });
    let n = 0;
    await stream.consume((ev) => {
      if (ev.type === 'chunk' && ++n === 3) stream.close();
    });
    expect(n).toBe(3);
    await e.waitForAbort(1);
    expect(e.requests[0]?.aborted).toBe(true);
  });

  it('an abort before headers is a 499', async () => {
    const e = await start({ mode: 'hang' });
    const ac = new AbortController();
    const p = streamRequest({ endpoint: { url: e.url }, path: '/v1/chat/completions', body: chat, signal: ac.signal });
    await e.waitForRequests(1);
    ac.abort();
    expect((await rejection(p)).statusCode).toBe(499);
    await e.waitForAbort(1);
  });

  it('a silent engine mid-stream fails after the idle timeout', async () => {
    const e = await start({ mode: { stallAfterEvents: 2 } });
    const events = await drain(await streamRequest({ endpoint: { url: e.url }, path: '/v1/chat/completions', body: chat, idleTimeoutMs: 100 }));
    expect(events.find((x) => x.type === 'error')).toMatchObject({ statusCode: 502 });
    expect(textOf(events)).toBe('Okay');
    await e.waitForAbort(1);
  });

  it('backpressure: while the handler waits, the engine is paused; nothing is lost', async () => {
    const n = 100_000;
    const e = await start({ mode: { generate: n } });
    const stream = await streamRequest({ endpoint: { url: e.url }, path: '/v1/chat/completions', body: chat });
    let text = '';
    let chunks = 0;
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let end: EngineStreamEvent | undefined;
    const done = stream.consume((ev) => {
      end = ev;
      if (ev.type !== 'chunk') return undefined;
      text += ev.text;
      return ++chunks === 5 ? held : undefined;
    });
    await expectHeldBack(e, n);
    release();
    await done;
    expect(text).toBe(generatedText(n));
    expect(end).toEqual({ type: 'end', sawDone: true, truncated: false, usage: { promptTokens: 8, completionTokens: n } });
  });

  describe('consume (pushed events)', () => {
    it('hands every event in order, the end last, once', async () => {
      const e = await start({ mode: { generate: 40 } });
      const pushed: EngineStreamEvent[] = [];
      await (await streamRequest({ endpoint: { url: e.url }, path: '/v1/chat/completions', body: chat })).consume((ev) => void pushed.push(ev));
      expect(textOf(pushed)).toBe(generatedText(40));
      expect(pushed.filter((x) => x.type === 'end')).toHaveLength(1);
      expect(pushed.at(-1)).toEqual({ type: 'end', sawDone: true, truncated: false, usage: { promptTokens: 8, completionTokens: 40 } });
    });

    it("a handler's pending promise holds the engine back; nothing is lost", async () => {
      const n = 100_000;
      const e = await start({ mode: { generate: n } });
      const stream = await streamRequest({ endpoint: { url: e.url }, path: '/v1/chat/completions', body: chat });
      let text = '';
      let release: () => void = () => undefined;
      const held = new Promise<void>((r) => (release = r));
      let calls = 0;
      let end: EngineStreamEvent | undefined;
      let callsWhileHeld = 0;
      let holding = false;
      const done = stream.consume((ev) => {
        if (holding) callsWhileHeld++;
        calls++;
        if (ev.type === 'chunk') text += ev.text;
        end = ev;
        if (calls === 5) {
          holding = true;
          return held.then(() => void (holding = false));
        }
        return undefined;
      });
      await expectHeldBack(e, n);
      expect(callsWhileHeld).toBe(0);
      release();
      await done;
      expect(text).toBe(generatedText(n));
      expect(end).toEqual({ type: 'end', sawDone: true, truncated: false, usage: { promptTokens: 8, completionTokens: n } });
    });

    it('a handler that throws closes the connection and the promise rejects with its error', async () => {
      const e = await start({ mode: { generate: 10_000, delayMs: 1 } });
      const stream = await streamRequest({ endpoint: { url: e.url }, path: '/v1/chat/completions', body: chat });
      let n = 0;
      const failure = new Error('sink broke');
      await expect(
        stream.consume((ev) => {
          if (ev.type === 'chunk' && ++n === 3) throw failure;
        }),
      ).rejects.toBe(failure);
      await e.waitForAbort(1);
      expect(e.requests[0]?.aborted).toBe(true);
      expect(n).toBe(3);
    });

    it('an abort mid-stream is a 499 error event, then the end', async () => {
      const e = await start({ mode: { stallAfterEvents: 2 } });
      const ac = new AbortController();
      const stream = await streamRequest({ endpoint: { url: e.url }, path: '/v1/chat/completions', body: chat, signal: ac.signal });
      const events: EngineStreamEvent[] = [];
      await stream.consume((ev) => {
        events.push(ev);
        if (ev.type === 'chunk' && events.length === 1) ac.abort();
      });
      expect(events.filter((x) => x.type === 'error')).toEqual([
        { type: 'error', message: `the request to the engine at ${e.url} was cancelled`, statusCode: 499 },
      ]);
      expect(events.at(-1)).toMatchObject({ type: 'end', truncated: true });
      await e.waitForAbort(1);
    });

    it('a silent engine mid-stream fails after the idle timeout; a handler holding the stream is not the engine', async () => {
      const e = await start({ mode: { stallAfterEvents: 2 } });
      const events: EngineStreamEvent[] = [];
      await (
        await streamRequest({ endpoint: { url: e.url }, path: '/v1/chat/completions', body: chat, idleTimeoutMs: 100 })
      ).consume((ev) => void events.push(ev));
      expect(events.find((x) => x.type === 'error')).toMatchObject({ statusCode: 502 });
      expect(textOf(events)).toBe('Okay');
      await e.waitForAbort(1);

      // The handler keeps the first chunk 300 ms (three idle periods): the stream is not failed for it.
      const slow = await start({ mode: { generate: 3 } });
      const got: EngineStreamEvent[] = [];
      await (
        await streamRequest({ endpoint: { url: slow.url }, path: '/v1/chat/completions', body: chat, idleTimeoutMs: 100 })
      ).consume((ev) => {
        got.push(ev);
        return got.length === 1 ? sleep(300) : undefined;
      });
      expect(got.filter((x) => x.type === 'error')).toEqual([]);
      expect(textOf(got)).toBe(generatedText(3));
    });

    it('a stream is consumed once: a second consume() is refused', async () => {
      const e = await start();
      const stream = await streamRequest({ endpoint: { url: e.url }, path: '/v1/chat/completions', body: chat });
      const consuming = stream.consume(() => undefined);
      await expect(stream.consume(() => undefined)).rejects.toThrow();
      await consuming;
    });
  });

  it('keeps connections alive across requests', async () => {
    const e = await start();
    for (let i = 0; i < 3; i++) await drain(await streamRequest({ endpoint: { url: e.url }, path: '/v1/chat/completions', body: chat }));
    const ports = new Set(e.requests.map((r) => r.remotePort));
    expect(ports.size).toBe(1);
  });
});

describe('requestJson', () => {
  it('returns the engine JSON and its usage, without stream options', async () => {
    const e = await start({ mode: { generate: 5 } });
    const r = await requestJson({ endpoint: { url: e.url, localModel: 'loc' }, path: '/v1/chat/completions', body: { ...chat, stream: true } });
    expect(r.statusCode).toBe(200);
    expect(r.json).toMatchObject({ object: 'chat.completion', model: 'loc', choices: [{ message: { content: 'tok0 tok1 tok2 tok3 tok4' } }] });
    expect(r.usage).toEqual({ promptTokens: 8, completionTokens: 5 });
    expect(e.requests[0]?.body).toEqual({ ...chat, model: 'loc', stream: false });
  });

  it('a trace without usage gives no usage; estimateTokens is the fallback', async () => {
    const e = await start();
    const r = await requestJson({ endpoint: { url: e.url }, path: '/v1/chat/completions', body: chat });
    expect(r.usage).toBeUndefined();
    expect(estimateTokens('Okay. Sure.')).toBe(3);
    expect(estimateTokens('')).toBe(0);
  });

  it('errors: HTTP status, non-JSON body, timeout', async () => {
    const e = await start({ mode: { status: 500, body: { error: { message: 'boom', code: 500 } } } });
    const err = await rejection(requestJson({ endpoint: { url: e.url }, path: '/v1/completions', body: { model: 'm', prompt: 'p' } }));
    expect([err.statusCode, err.message]).toEqual([500, 'boom']);
    await e.setMode('garbage');
    const g = await rejection(requestJson({ endpoint: { url: e.url }, path: '/v1/completions', body: { model: 'm', prompt: 'p' } }));
    expect(g.statusCode).toBe(502);
    expect(g.message).toContain('not JSON');
    await e.setMode('hang');
    // Headers come only with a non-stream answer: the headers deadline tells the caller, the total bound ends it.
    const overdue: number[] = [];
    const t = await rejection(
      requestJson({
        endpoint: { url: e.url },
        path: '/v1/completions',
        body: { model: 'm', prompt: 'p' },
        headersTimeoutMs: 50,
        totalTimeoutMs: 300,
        onHeadersOverdue: (ms) => overdue.push(ms),
      }),
    );
    expect(t.statusCode).toBe(504);
    expect(overdue).toEqual([50]);
  });
});
