// Fault: the engine misbehaves. It drops the connection mid-stream, hangs before the first byte,
// stalls mid-stream, answers 500 / 429, or sends garbage. Every request must end with a clear error
// (status and message) in bounded time, nothing may be doubled, and the next request must succeed.
import { afterEach, describe, expect, it } from 'vitest';
import type { DevHub } from '../../src/cli/dev-hub';
import { chat, lastStatus, modelOf, registered, startStack, until, type Stack } from '../support/stack';
import { generatedText } from '../support/traces';
import { NETWORK_OUTAGE } from '../../src/core/hub/network-answer';
import { audit, report, rng, scale, streamChat } from '../support/faults/faults';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

/** A non-stream chat through the hub: status and parsed body. */
async function once(hub: DevHub, model: string): Promise<{ status: number; message?: string }> {
  const res = await chat(hub, { model, max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] });
  // OpenAI form {error:{message}} or the vLLM / SGLang form {object:"error", message} relayed as is.
  const body = (await res.json()) as { error?: { message?: string }; message?: string };
  const message = body.error?.message ?? body.message;
  return { status: res.status, ...(message !== undefined ? { message } : {}) };
}

/** The stack serves a normal request again after the fault. */
async function stillServes(s: Stack): Promise<void> {
  await s.engines[0]!.setMode({ generate: 1000 });
  const after = await streamChat(s.hub!, s.engines[0]!.modelIds[0]!, 12);
  expect(after.error).toBeUndefined();
  expect(after.text).toBe(generatedText(12));
}

describe('engine faults', () => {
  it('drops mid-stream at random points: each request ends with 502 and a message, the text so far is a clean prefix', async () => {
    const r = rng(0x5eed03);
    stack = await startStack({ engines: [{ mode: { generate: 200 } }] });
    await registered(stack);
    const { hub } = stack;
    const engine = stack.engines[0]!;
    const model = engine.modelIds[0]!;
    const counts = { injected: 0, recovered: 0, lost: 0, duplicated: 0 };
    const rounds = scale(6, 30);
    for (let i = 0; i < rounds; i++) {
      const dropAfter = r.int(2, 150);
      await engine.setMode({ generate: 200, dropAfterEvents: dropAfter });
      const o = await streamChat(hub!, model, 200);
      counts.injected++;
      const a = audit(o.text, 0);
      counts.duplicated += a.duplicated;
      // The role chunk is event 1, token k is event k+2: what arrived must be exactly the tokens sent.
      const expected = generatedText(Math.max(0, dropAfter - 1));
      if (o.error && o.text === expected && !o.sawDone) counts.recovered++;
      else counts.lost++;
      expect({ dropAfter, error: o.error, text: o.text }).toEqual({
        dropAfter,
        error: expect.stringMatching(/engine|stream|closed|socket|terminated|aborted/i),
        text: expected,
      });
    }
    await until(() => hub!.received.filter((m) => m.type === 'stream_end').length >= rounds, 'every stream_end');
    const ends = hub!.received.filter((m) => m.type === 'stream_end').map((m) => m.payload);
    expect(ends.every((e) => e.status_code === 502 && typeof e.error === 'string' && e.error !== '')).toBe(true);
    report('engine-drop-mid-stream', counts, { rounds });
    expect(counts.lost).toBe(0);
    expect(counts.duplicated).toBe(0);
    await stillServes(stack);
  });

  it('answers 500 and 429 (stream and non-stream): the status and the engine message reach the client', async () => {
    stack = await startStack();
    await registered(stack);
    const hub = stack.hub!;
    const engine = stack.engines[0]!;
    const model = engine.modelIds[0]!;
    const counts = { injected: 0, recovered: 0, lost: 0, duplicated: 0 };
    const cases = [
      { status: 500, body: { object: 'error', message: 'CUDA out of memory', type: 'InternalServerError', code: 500 } },
      { status: 429, body: { object: 'error', message: 'too many requests in flight', type: 'RateLimitError', code: 429 } },
    ];
    for (const mode of cases) {
      await engine.setMode(mode);
      const s = await streamChat(hub, model, 10);
      const n = await once(hub, model);
      counts.injected += 2;
      for (const got of [
        { status: s.status, message: s.error },
        { status: n.status, message: n.message },
      ]) {
        if (got.status === mode.status && got.message?.includes(mode.body.message)) counts.recovered++;
        else counts.lost++;
        expect(got).toEqual({ status: mode.status, message: expect.stringContaining(mode.body.message) });
      }
    }
    report('engine-500-429', counts);
    expect(counts.lost).toBe(0);
    await stillServes(stack);
  });

  it('sends garbage (not JSON): the request ends with 502 naming the problem', async () => {
    stack = await startStack({ engines: [{ mode: 'garbage' }] });
    await registered(stack);
    const hub = stack.hub!;
    const model = stack.engines[0]!.modelIds[0]!;
    const s = await streamChat(hub, model, 10);
    const n = await once(hub, model);
    const outcomes = [
      { status: s.status, message: s.error },
      { status: n.status, message: n.message },
    ];
    const ok = outcomes.filter((o) => o.status === 502 && /not JSON/i.test(o.message ?? '')).length;
    report('engine-garbage', { injected: 2, recovered: ok, lost: 2 - ok, duplicated: 0 });
    expect(outcomes).toEqual([
      { status: 502, message: expect.stringMatching(/not JSON/i) },
      { status: 502, message: expect.stringMatching(/not JSON/i) },
    ]);
    await until(() => hub.received.some((m) => m.type === 'stream_end'), 'stream_end');
    expect(hub.received.find((m) => m.type === 'stream_end')!.payload).toMatchObject({ status_code: 502, error: expect.stringMatching(/not JSON/i) });
    await stillServes(stack);
  });

  it('hangs before the first byte: the hub cancel frees the engine request at once', async () => {
    stack = await startStack({ engines: [{ mode: 'hang' }] });
    await registered(stack);
    const engine = stack.engines[0]!;
    const ctl = new AbortController();
    const pending = streamChat(stack.hub!, engine.modelIds[0]!, 10, ctl.signal);
    await engine.waitForRequests(1 + engine.requests.filter((q) => q.path !== '/v1/chat/completions').length);
    await until(async () => (await lastStatus(stack!.agent)) === 'running', 'request running at the engine');
    ctl.abort();
    await pending;
    await engine.waitForAbort(1);
    await until(async () => (await lastStatus(stack!.agent)) === 'cancelled', 'request cancelled');
    report('engine-hang-hub-cancel', { injected: 1, recovered: 1, lost: 0, duplicated: 0 });
    await stillServes(stack);
  });

  // The default (60 s) is config's (test/core/config/config.test.ts); this shows the configured value is the one that ends it.
  it('hangs before the first byte with no cancel: ends with 504 once [Agent] EngineHeadersTimeoutSeconds passes', async () => {
    stack = await startStack({ engines: [{ mode: 'hang' }], agent: { EngineHeadersTimeoutSeconds: 0.5 } });
    await registered(stack);
    const started = Date.now();
    const o = await streamChat(stack.hub!, stack.engines[0]!.modelIds[0]!, 10);
    const ms = Date.now() - started;
    // The network hears the generic outage words (never the owner's engine address); the owner's log keeps the detail.
    const ok = o.status === 504 && o.error === NETWORK_OUTAGE;
    report('engine-hang-timeout', { injected: 1, recovered: ok ? 1 : 0, lost: ok ? 0 : 1, duplicated: 0 }, { endedAfterMs: ms });
    expect(o).toMatchObject({ status: 504, error: NETWORK_OUTAGE });
    expect(ms).toBeLessThan(5000);
    await stack.engines[0]!.waitForAbort(1);
    // (A non-stream request: test/faults/engine-bounds.test.ts.) The endpoint is suspect now: it serves again
    // once a check gets an answer from it.
    await stack.engines[0]!.setMode({ generate: 1000 });
    await until(() => modelOf(stack!.agent, stack!.engines[0]!.modelIds[0]!)?.health === 'healthy', 'healthy again', 15_000);
    await stillServes(stack);
  });

  it('stalls mid-stream: the hub cancel frees the engine request', async () => {
    stack = await startStack({ engines: [{ mode: { generate: 100, stallAfterEvents: 10 } }] });
    await registered(stack);
    const engine = stack.engines[0]!;
    const ctl = new AbortController();
    const pending = streamChat(stack.hub!, engine.modelIds[0]!, 100, ctl.signal);
    await engine.waitForEvents(10);
    await until(() => stack!.hub!.received.filter((m) => m.type === 'stream_chunk').length >= 9, 'the chunks before the stall relayed');
    ctl.abort();
    await pending;
    await engine.waitForAbort(1);
    report('engine-stall-hub-cancel', { injected: 1, recovered: 1, lost: 0, duplicated: 0 });
    await stillServes(stack);
  });

  it('stalls mid-stream with no cancel: ends with an error once [Agent] EngineIdleTimeoutSeconds passes', async () => {
    stack = await startStack({ engines: [{ mode: { generate: 100, stallAfterEvents: 10 } }], agent: { EngineIdleTimeoutSeconds: 0.5 } });
    await registered(stack);
    const started = Date.now();
    const o = await streamChat(stack.hub!, stack.engines[0]!.modelIds[0]!, 100);
    const ms = Date.now() - started;
    const ok = /sent nothing/.test(o.error ?? '') && o.text === generatedText(9) && !o.sawDone;
    report(
      'engine-stall-idle-timeout',
      { injected: 1, recovered: ok ? 1 : 0, lost: ok ? 0 : 1, duplicated: audit(o.text, 0).duplicated },
      { endedAfterMs: ms },
    );
    expect(o.error).toMatch(/sent nothing for 500 ms/);
    expect(o.text).toBe(generatedText(9)); // the role chunk and 9 tokens came before the stall
    expect(ms).toBeLessThan(5000);
    await stack.engines[0]!.waitForAbort(1);
    await until(() => stack!.hub!.received.some((m) => m.type === 'stream_end'), 'stream_end');
    expect(stack.hub!.received.find((m) => m.type === 'stream_end')!.payload).toMatchObject({ status_code: 502, error: expect.stringMatching(/sent nothing/) });
    await stillServes(stack);
  });
});
