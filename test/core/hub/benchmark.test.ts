import { afterEach, describe, expect, it } from 'vitest';
import { requestJson } from '../../../src/core/engine-client/client';
import type { EngineEndpoint } from '../../../src/core/engine-client/types';
import { handleBenchmark, isCorrect, type BenchmarkDeps } from '../../../src/core/hub/benchmark';
import { startTestEngine, type TestEngine } from '../../support/engine-server';

let engine: TestEngine | undefined;
afterEach(async () => {
  await engine?.close();
  engine = undefined;
});

function deps(endpoint: EngineEndpoint, extra: Partial<BenchmarkDeps> = {}): BenchmarkDeps {
  return { resolve: (m) => (m === 'llama' ? { endpoint } : undefined), complete: requestJson, ...extra };
}

describe('benchmark', () => {
  it('runs every prompt at temperature 0, max_tokens 500, and scores answers by lowercase containment (Go)', async () => {
    engine = await startTestEngine({ mode: { generate: 4 }, promptTokens: 11 });
    const reply = await handleBenchmark(
      {
        benchmark_id: 'b-1',
        test_type: 'math',
        model_id: 'llama',
        timeout_ms: 10_000,
        prompts: [
          { id: 'p1', prompt: 'first', expected_answer: 'TOK1 tok2' },
          { id: 'p2', prompt: 'second', expected_answer: 'Paris' },
          { id: 'p3', prompt: 'third' },
        ],
      },
      deps({ url: engine.url, localModel: 'llama-local' }),
      'req-9',
    );
    expect(reply).toMatchObject({ request_id: 'req-9', benchmark_id: 'b-1' });
    expect(reply.error).toBeUndefined();
    expect(reply.results.map((r) => [r.prompt_id, r.answer, r.correct, r.tokens_in, r.tokens_out, r.error])).toEqual([
      ['p1', 'tok0 tok1 tok2 tok3', true, 11, 4, undefined],
      ['p2', 'tok0 tok1 tok2 tok3', false, 11, 4, undefined],
      ['p3', 'tok0 tok1 tok2 tok3', true, 11, 4, undefined],
    ]);
    for (const r of reply.results) expect(r.latency_ms).toBeGreaterThanOrEqual(0);
    expect(reply.total_latency_ms).toBe(reply.results.reduce((a, r) => a + r.latency_ms, 0));

    const bodies = engine.requests.filter((r) => r.path === '/v1/chat/completions').map((r) => r.body);
    expect(bodies).toEqual(
      ['first', 'second', 'third'].map((content) => ({
        model: 'llama-local',
        messages: [{ role: 'user', content }],
        temperature: 0,
        max_tokens: 500,
        stream: false,
      })),
    );
  });

  it("isCorrect is Go's: the lowercased answer contains the lowercased expected answer; nothing expected is correct", () => {
    expect(isCorrect('The answer is 42.', '42')).toBe(true);
    expect(isCorrect('PARIS, France', 'paris')).toBe(true);
    // No looser than Go: spaces and width count.
    expect(isCorrect('The answer is  4 2.', '42')).toBe(false);
    expect(isCorrect('new\nYORK city', 'New York')).toBe(false);
    expect(isCorrect('ＡＢＣ', 'abc')).toBe(false);
    expect(isCorrect('forty-two', '42')).toBe(false);
    expect(isCorrect('', undefined)).toBe(true);
    expect(isCorrect('anything', '')).toBe(true);
  });

  it('times out a slow prompt on its own and goes on with the next', async () => {
    // An engine that would take a minute a token: without the per-prompt timeout this never answers in time.
    engine = await startTestEngine({ mode: { generate: 2, delayMs: 60_000 } });
    const reply = await handleBenchmark(
      {
        benchmark_id: 'b-2',
        model_id: 'llama',
        timeout_ms: 20_000,
        prompts: [
          { id: 'a', prompt: 'x' },
          { id: 'b', prompt: 'y' },
        ],
      },
      deps({ url: engine.url }, { promptTimeoutMs: 80 }),
    );
    expect(reply.results).toHaveLength(2);
    for (const r of reply.results) {
      expect(r).toMatchObject({ answer: '', correct: false, error: 'timed out after 80 ms' });
      expect(r.latency_ms).toBeGreaterThanOrEqual(75);
    }
    expect(engine.requests.filter((r) => r.path === '/v1/chat/completions')).toHaveLength(2);
    await engine.waitForAbort(2);
  });

  it('every prompt runs, each with max(30 s, timeout_ms / n): timeout_ms 0, or absent, is 30 s a prompt', async () => {
    engine = await startTestEngine({ mode: { generate: 1, delayMs: 100 } });
    const seen: number[] = [];
    const complete: BenchmarkDeps['complete'] = (o) => {
      seen.push(o.headersTimeoutMs ?? -1);
      return requestJson(o);
    };
    const prompts = Array.from({ length: 3 }, (_, i) => ({ id: `q${i}`, prompt: `p${i}`, expected_answer: 'tok0' }));
    for (const timeout_ms of [0, undefined, 1_000, 300_000]) {
      seen.length = 0;
      const reply = await handleBenchmark(
        { benchmark_id: 'b-3', model_id: 'llama', prompts, ...(timeout_ms === undefined ? {} : { timeout_ms }) },
        deps({ url: engine.url }, { complete }),
      );
      expect(reply.error).toBeUndefined();
      expect(reply.results.map((r) => [r.prompt_id, r.correct, r.error])).toEqual(prompts.map((p) => [p.id, true, undefined]));
      expect(seen).toEqual([0, 1, 2].map(() => (timeout_ms === 300_000 ? 100_000 : 30_000)));
    }
  });

  it('a null prompt list is an empty benchmark; a bad or long prompt fails alone, never the whole benchmark', async () => {
    engine = await startTestEngine({
      mode: { status: 400, body: { object: 'error', message: "This model's maximum context length is 4096 tokens", type: 'BadRequestError', code: 400 } },
    });
    const empty = await handleBenchmark({ benchmark_id: 'b-8', model_id: 'llama', prompts: null, timeout_ms: 0 }, deps({ url: engine.url }));
    expect(empty).toMatchObject({ benchmark_id: 'b-8', results: [], total_latency_ms: 0 });
    expect(empty.error).toBeUndefined();
    const long = 'word '.repeat(150_000);
    const reply = await handleBenchmark(
      { benchmark_id: 'b-9', model_id: 'llama', timeout_ms: 0, prompts: [{ id: 'long', prompt: long }, { id: 'bad', prompt: 42 }, { prompt: 'no id' }] },
      deps({ url: engine.url }),
    );
    expect(reply.error).toBeUndefined();
    expect(reply.results.map((r) => [r.prompt_id, r.error_code])).toEqual([
      ['long', 'engine_error'],
      ['bad', 'invalid_prompt'],
      ['#2', 'invalid_prompt'],
    ]);
    expect(reply.results[0]!.error).toContain('maximum context length');
    // Only the well-formed prompt reached the engine.
    expect(engine.requests.filter((r) => r.path === '/v1/chat/completions')).toHaveLength(1);
  });

  it('reports engine errors per prompt, an unknown model and a bad payload clearly', async () => {
    engine = await startTestEngine({ mode: { status: 503, body: { error: { message: 'Service is overloaded', type: 'server_error' } } } });
    const reply = await handleBenchmark(
      { benchmark_id: 'b-4', model_id: 'llama', timeout_ms: 5_000, prompts: [{ id: 'a', prompt: 'x' }] },
      deps({ url: engine.url }),
    );
    expect(reply.results[0]).toMatchObject({ prompt_id: 'a', correct: false, error_code: 'engine_error' });
    // The engine's own words reach the hub.
    expect(reply.results[0]!.error).toContain('Service is overloaded');

    const unknown = await handleBenchmark(
      { benchmark_id: 'b-5', model_id: 'gpt-9', timeout_ms: 5_000, prompts: [{ id: 'a', prompt: 'x' }] },
      deps({ url: engine.url }),
    );
    expect(unknown.error_code).toBe('model_not_served');
    expect(unknown.results).toEqual([
      { prompt_id: 'a', answer: '', correct: false, latency_ms: 0, tokens_in: 0, tokens_out: 0, error: unknown.error, error_code: 'model_not_served' },
    ]);

    const bad = await handleBenchmark({ benchmark_id: 'b-6', model_id: 'llama', prompts: 'all of them' }, deps({ url: engine.url }), 'r');
    expect(bad).toMatchObject({ request_id: 'r', benchmark_id: 'b-6', results: [], total_latency_ms: 0, error_code: 'invalid_payload' });
    // The field at fault is named.
    expect(bad.error).toContain('prompts');
  });

  it('stops when its signal aborts', async () => {
    engine = await startTestEngine({ mode: 'hang' });
    const ac = new AbortController();
    const pending = handleBenchmark(
      {
        benchmark_id: 'b-7',
        model_id: 'llama',
        timeout_ms: 60_000,
        prompts: [
          { id: 'a', prompt: 'x' },
          { id: 'b', prompt: 'y' },
        ],
      },
      deps({ url: engine.url }, { signal: ac.signal }),
    );
    await engine.waitForRequests(1);
    ac.abort();
    const reply = await pending;
    expect(reply.results.map((r) => r.error)).toEqual(['the benchmark was stopped', 'not run: the benchmark was stopped']);
    expect(reply.error).toBe('the benchmark was stopped before it finished');
  });
});
