// The agent's own engine calls (warmup, verify, benchmark) go through the engine-call service like any
// request: admitted by the scheduler (a warmup waits behind MaxConcurrentPerEndpoint), sent to the
// endpoint the lease names (two endpoints: the one the scheduler picked, never a second choice made
// beside it), and booked as source 'local' with their purpose, so never as hub earnings.
// Real dev hub, real test engines, real Agent.
import { afterEach, describe, expect, it } from 'vitest';
import { call, ledgerRows, modelOf, chat, registered, requests, startStack, today, until, type Stack } from '../../support/stack';
import type { TestEngine } from '../../support/engine-server';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

const generations = (e: TestEngine) => e.requests.filter((r) => r.path.endsWith('/completions'));

/** A hub stream that keeps its endpoint busy until `stop()`. */
async function longStream(s: Stack, model: string): Promise<{ stop(): void }> {
  const ctl = new AbortController();
  const res = await chat(s.hub!, { model, stream: true, max_tokens: 100_000, messages: [{ role: 'user', content: 'long' }] }, { signal: ctl.signal });
  await res.body!.getReader().read();
  return { stop: () => ctl.abort() };
}

async function twoEndpoints(): Promise<{ s: Stack; model: string; a: TestEngine; b: TestEngine }> {
  const s = await startStack({
    hub: { earningsEnabled: true },
    engines: [{ mode: { generate: 100_000, delayMs: 5 } }, { mode: { generate: 100_000, delayMs: 5 } }],
    agent: { MaxConcurrentPerEndpoint: 1, HealthCheckIntervalSeconds: 30 },
  });
  const [a, b] = s.engines as [TestEngine, TestEngine];
  const model = a.modelIds[0]!;
  // models.json maps the model to a (first endpoint); b is an engine the owner added, serving it too.
  await s.agent.invoke('engines.addEndpoint', { url: b.url });
  await until(() => modelOf(s.agent, model)?.endpoints.length === 2, 'two endpoints');
  await registered(s);
  return { s, model, a, b };
}

describe('internal generations go through the inference service', () => {
  it('a warmup beyond MaxConcurrentPerEndpoint waits for admission, then runs and is booked as local', async () => {
    stack = await startStack({ engines: [{ mode: { generate: 100_000, delayMs: 5 } }], agent: { MaxConcurrentPerEndpoint: 1 } });
    await registered(stack);
    const engine = stack.engines[0]!;
    const model = engine.modelIds[0]!;
    const busy = await longStream(stack, model);
    expect(generations(engine)).toHaveLength(1);

    const warm = fetch(`${stack.hub!.url}/dev/warmup`, { method: 'POST', body: JSON.stringify({ model_id: model, warmup_type: 'inference' }) });
    await until(() => modelOf(stack!.agent, model)?.queued === 1, 'the warmup queued behind the stream');
    expect(generations(engine)).toHaveLength(1);

    busy.stop();
    const ack = (await (await warm).json()) as Record<string, unknown>;
    // This engine generates until max_tokens: the greeting ran (admitted, booked) and its reply was checked.
    expect(ack).toMatchObject({ _type: 'ack', model_id: model, success: false, error: expect.stringContaining('did not end within 64 tokens') });
    expect(generations(engine)).toHaveLength(2);
    expect(generations(engine)[1]!.body).toMatchObject({ max_tokens: 64 });
    const row = (await requests(stack.agent)).find((r) => r.purpose === 'warmup');
    expect(row).toMatchObject({ source: 'local', status: 'ok', endpoint: engine.url });
  });

  it('verify with two endpoints: the generation goes to the leased endpoint', async () => {
    const t = await twoEndpoints();
    stack = t.s;
    const busy = await longStream(t.s, t.model);
    // The stream leased the first endpoint (least outstanding, least recently used): only b is free.
    expect(generations(t.a)).toHaveLength(1);
    const res = await fetch(`${t.s.hub!.url}/dev/verify`, {
      method: 'POST',
      body: JSON.stringify({ challenge_id: 'c1', challenge_type: 'deterministic', model_id: t.model, challenge: { prompt: 'say hi', seed: 7, max_tokens: 3 } }),
    });
    const reply = (await res.json()) as { success: boolean; error?: string };
    busy.stop();
    expect(reply).toMatchObject({ success: true });
    expect(generations(t.b)).toHaveLength(1);
    expect(generations(t.b)[0]!.body).toMatchObject({ seed: 7, temperature: 0 });
    expect(generations(t.a)).toHaveLength(1);
    expect((await requests(t.s.agent)).find((r) => r.purpose === 'verify')).toMatchObject({ source: 'local', status: 'ok', endpoint: t.b.url });
  });

  it('benchmark with two endpoints: each prompt goes to the leased endpoint, none counted as hub earnings', async () => {
    const t = await twoEndpoints();
    stack = t.s;
    // A price for the model: a hub row would earn; the benchmark's must not.
    await until(async () => (await call(t.s.agent, 'prices.list', {})).earningsEnabled, 'earnings on at the hub');
    await call(t.s.agent, 'prices.set', { model: t.model, inputPerM: 1_000_000, outputPerM: 1_000_000 });
    const busy = await longStream(t.s, t.model);
    expect(generations(t.a)).toHaveLength(1);
    const res = await fetch(`${t.s.hub!.url}/dev/benchmark`, {
      method: 'POST',
      body: JSON.stringify({
        benchmark_id: 'b1',
        model_id: t.model,
        prompts: [
          { id: 'p1', prompt: 'one' },
          { id: 'p2', prompt: 'two' },
        ],
        timeout_ms: 10_000,
      }),
    });
    const reply = (await res.json()) as { results: Array<{ prompt_id: string; error?: string }> };
    busy.stop();
    expect(reply.results.map((r) => [r.prompt_id, r.error])).toEqual([
      ['p1', undefined],
      ['p2', undefined],
    ]);
    expect(generations(t.b)).toHaveLength(2);
    expect(generations(t.a)).toHaveLength(1);
    const rows = (await requests(t.s.agent)).filter((r) => r.purpose === 'benchmark');
    expect(rows.map((r) => [r.source, r.status, r.endpoint])).toEqual([
      ['local', 'ok', t.b.url],
      ['local', 'ok', t.b.url],
    ]);
    const ledgered = async () => (await ledgerRows(t.s.agent)).filter((r) => r.request_id!.startsWith('benchmark-'));
    await until(async () => (await ledgered()).length === 2, 'benchmark rows in the ledger');
    expect((await ledgered()).map((r) => [r.source, r.status, Number(r.tokens_out) > 0, Number(r.earnings)])).toEqual([
      ['local', 'ok', true, 0],
      ['local', 'ok', true, 0],
    ]);
    expect(today(t.s.agent).earnings).toBe(0);
  });
});
