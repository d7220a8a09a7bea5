import { afterEach, describe, expect, it } from 'vitest';
import { requestJson } from '../../../src/core/engine/client';
import type { EngineEndpoint } from '../../../src/core/engine/types';
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
  it('runs every prompt at temperature 0 and scores answers ignoring case and spaces', async () => {
    engine = await startTestEngine({ mode: { generate: 4 }, promptTokens: 11 });
    const reply = await handleBenchmark(
      {
        benchmark_id: 'b-1',
        test_type: 'math',
        model_id: 'llama',
        timeout_ms: 10_000,
        prompts: [
          { id: 'p1', prompt: 'first', expected_answer: 'TOK1  tok2' },
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
    expect(reply.total_latency_ms).toBeGreaterThanOrEqual(reply.results.reduce((a, r) => a + r.latency_ms, 0) - 3);

    const bodies = engine.requests.filter((r) => r.path === '/v1/chat/completions').map((r) => r.body);
    expect(bodies).toEqual(
      ['first', 'second', 'third'].map((content) => ({ model: 'llama-local', messages: [{ role: 'user', content }], temperature: 0, max_tokens: 500, stream: false })),
    );
  });

  it('isCorrect normalises case, spaces and width', () => {
    expect(isCorrect('The answer is  4 2.', '42')).toBe(true);
    expect(isCorrect('new\nYORK city', 'New York')).toBe(true);
    expect(isCorrect('ＡＢＣ', 'abc')).toBe(true);
    expect(isCorrect('forty-two', '42')).toBe(false);
    expect(isCorrect('', undefined)).toBe(true);
  });

  it('times out a slow prompt on its own and goes on with the next', async () => {
    // An engine that would take a minute a token: without the per-prompt timeout this never answers in time.
    engine = await startTestEngine({ mode: { generate: 2, delayMs: 60_000 } });
    const reply = await handleBenchmark(
      { benchmark_id: 'b-2', model_id: 'llama', timeout_ms: 20_000, prompts: [{ id: 'a', prompt: 'x' }, { id: 'b', prompt: 'y' }] },
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

  it("answers before the hub's timeout_ms with what finished and an error for the rest", async () => {
    engine = await startTestEngine({ mode: { generate: 1, delayMs: 100 } });
    const prompts = Array.from({ length: 12 }, (_, i) => ({ id: `q${i}`, prompt: `p${i}`, expected_answer: 'tok0' }));
    // 12 prompts of at least 100 ms each do not fit in the hub's 1 s: the reply comes at the deadline (before
    // timeout_ms, with a margin), with what finished and the rest marked as stopped there.
    const reply = await handleBenchmark({ benchmark_id: 'b-3', model_id: 'llama', timeout_ms: 1_000, prompts }, deps({ url: engine.url }));
    expect(reply.results.map((r) => r.prompt_id)).toEqual(prompts.map((p) => p.id));

    const done = reply.results.filter((r) => !r.error);
    const missed = reply.results.filter((r) => r.error);
    expect(done.length).toBeGreaterThanOrEqual(3);
    expect(missed.length).toBeGreaterThanOrEqual(2);
    // The finished ones come first and are scored; the rest carry why they did not finish.
    expect(reply.results.slice(0, done.length)).toEqual(done);
    expect(done.every((r) => r.correct && r.answer === 'tok0')).toBe(true);
    expect(missed.every((r) => !r.correct && r.error_code === 'deadline')).toBe(true);
    expect(reply.error_code).toBe('deadline');
    // The owner and the hub read how far it got.
    expect(reply.error).toMatch(/after \d+ of 12 prompts/);
  });

  it('reports engine errors per prompt, an unknown model and a bad payload clearly', async () => {
    engine = await startTestEngine({ mode: { status: 503, body: { error: { message: 'Service is overloaded', type: 'server_error' } } } });
    const reply = await handleBenchmark({ benchmark_id: 'b-4', model_id: 'llama', timeout_ms: 5_000, prompts: [{ id: 'a', prompt: 'x' }] }, deps({ url: engine.url }));
    expect(reply.results[0]).toMatchObject({ prompt_id: 'a', correct: false, error_code: 'engine_error' });
    // The engine's own words reach the hub.
    expect(reply.results[0]!.error).toContain('Service is overloaded');

    const unknown = await handleBenchmark({ benchmark_id: 'b-5', model_id: 'gpt-9', timeout_ms: 5_000, prompts: [{ id: 'a', prompt: 'x' }] }, deps({ url: engine.url }));
    expect(unknown.error_code).toBe('model_not_served');
    expect(unknown.results).toEqual([{ prompt_id: 'a', answer: '', correct: false, latency_ms: 0, tokens_in: 0, tokens_out: 0, error: unknown.error, error_code: 'model_not_served' }]);

    const bad = await handleBenchmark({ benchmark_id: 'b-6', model_id: 'llama', prompts: 'all of them' }, deps({ url: engine.url }), 'r');
    expect(bad).toMatchObject({ request_id: 'r', benchmark_id: 'b-6', results: [], total_latency_ms: 0, error_code: 'invalid_payload' });
    // The field at fault is named.
    expect(bad.error).toContain('prompts');
  });

  it('stops when its signal aborts', async () => {
    engine = await startTestEngine({ mode: 'hang' });
    const ac = new AbortController();
    const pending = handleBenchmark(
      { benchmark_id: 'b-7', model_id: 'llama', timeout_ms: 60_000, prompts: [{ id: 'a', prompt: 'x' }, { id: 'b', prompt: 'y' }] },
      deps({ url: engine.url }, { signal: ac.signal }),
    );
    await engine.waitForRequests(1);
    ac.abort();
    const reply = await pending;
    expect(reply.results.map((r) => r.error)).toEqual(['the benchmark was stopped', 'not run: the benchmark was stopped']);
    expect(reply.error).toBe('the benchmark was stopped before it finished');
  });
});
