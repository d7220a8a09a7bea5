// The simulated engine of `swan-provider demo`, driven by the official OpenAI client over real HTTP.
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_SIMULATED_MODELS, SIMULATED_PREFIX, startSimulatedEngine, type SimulatedEngine } from '../../src/cli/sim-engine';

let engine: SimulatedEngine | undefined;
afterEach(async () => {
  await engine?.close();
  engine = undefined;
});

const client = (e: SimulatedEngine) => new OpenAI({ baseURL: `${e.url}/v1`, apiKey: 'unused', maxRetries: 0 });

describe('simulated engine', () => {
  it('lists its models as simulated', async () => {
    engine = await startSimulatedEngine({ host: '127.0.0.1' });
    const list = await client(engine).models.list();
    expect(list.data.map((m) => m.id)).toEqual(DEFAULT_SIMULATED_MODELS);
    expect(list.data.every((m) => m.owned_by === 'swan-simulated')).toBe(true);
    expect(engine.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('streams a labelled chat answer token by token, with usage when include_usage is set', async () => {
    engine = await startSimulatedEngine({ host: '127.0.0.1', models: ['sim-a'], tokensPerSecond: 400, firstTokenMs: 5 });
    const stream = await client(engine).chat.completions.create({
      model: 'sim-a',
      messages: [{ role: 'user', content: 'Tell me about GPUs.' }],
      max_tokens: 20,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let contentChunks = 0;
    let usage: OpenAI.CompletionUsage | undefined;
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      const c = chunk.choices[0];
      if (c?.delta.content) {
        text += c.delta.content;
        contentChunks++;
      }
      if (c?.finish_reason) finish = c.finish_reason;
      if (chunk.usage) {
        expect(chunk.choices).toEqual([]);
        usage = chunk.usage;
      }
    }
    expect(text.startsWith(SIMULATED_PREFIX)).toBe(true);
    expect(contentChunks).toBe(20);
    expect(finish).toBe('length');
    expect(usage).toMatchObject({ completion_tokens: 20, prompt_tokens: 5, total_tokens: 25 });
  });

  it('omits the usage chunk without include_usage and ends with [DONE]', async () => {
    engine = await startSimulatedEngine({ models: ['sim-a'], tokensPerSecond: 500, firstTokenMs: 0 });
    const res = await fetch(`${engine.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim-a', messages: [{ role: 'user', content: 'hi' }], max_tokens: 3, stream: true }),
    });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const events = (await res.text()).split('\n\n').filter(Boolean);
    expect(events[events.length - 1]).toBe('data: [DONE]');
    const parsed = events.slice(0, -1).map((e) => JSON.parse(e.slice(6)) as { choices: unknown[]; usage?: unknown });
    expect(parsed.some((p) => p.usage)).toBe(false);
    expect(parsed).toHaveLength(1 + 3 + 1); // role, 3 tokens, finish
  });

  it('answers non-streaming chat and legacy completions in one body', async () => {
    engine = await startSimulatedEngine({ models: ['sim-a'], tokensPerSecond: 1000, firstTokenMs: 0 });
    const chat = await client(engine).chat.completions.create({ model: 'sim-a', messages: [{ role: 'user', content: 'hello there' }], max_tokens: 8 });
    expect(chat.object).toBe('chat.completion');
    expect(chat.choices[0]?.message.content?.startsWith('[simulated]')).toBe(true);
    expect(chat.usage?.completion_tokens).toBe(8);
    const cmpl = await client(engine).completions.create({ model: 'sim-a', prompt: 'Once upon a time', max_tokens: 5 });
    expect(cmpl.object).toBe('text_completion');
    expect(cmpl.choices[0]?.text.startsWith('[simulated]')).toBe(true);
    expect(cmpl.usage?.completion_tokens).toBe(5);
  });

  it('generates at about the configured token rate', async () => {
    engine = await startSimulatedEngine({ models: ['sim-a'], tokensPerSecond: 100, firstTokenMs: 0 });
    const started = Date.now();
    const stream = await client(engine).chat.completions.create({ model: 'sim-a', messages: [{ role: 'user', content: 'x' }], max_tokens: 30, stream: true });
    for await (const _chunk of stream) {
      /* drain */
    }
    const elapsed = Date.now() - started;
    // 29 gaps of 8-12 ms
    expect(elapsed).toBeGreaterThanOrEqual(29 * 8 - 5);
    expect(elapsed).toBeLessThan(2000);
  });

  it('refuses unknown models with 404 and bad bodies with 400, in OpenAI error form', async () => {
    engine = await startSimulatedEngine({ models: ['sim-a'] });
    await expect(client(engine).chat.completions.create({ model: 'nope', messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({ status: 404 });
    const res = await fetch(`${engine.url}/v1/chat/completions`, { method: 'POST', body: '{"model":"sim-a"' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/not valid JSON/);
    const res2 = await fetch(`${engine.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify({ model: 'sim-a', messages: [] }) });
    expect(res2.status).toBe(400);
    expect(((await res2.json()) as { error: { message: string } }).error.message).toMatch(/messages/);
  });

  it('stops generating when the client goes away, and closes promptly', async () => {
    engine = await startSimulatedEngine({ models: ['sim-a'], tokensPerSecond: 20, firstTokenMs: 0 });
    const ac = new AbortController();
    const res = await fetch(`${engine.url}/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ model: 'sim-a', messages: [{ role: 'user', content: 'x' }], max_tokens: 1000, stream: true }),
      signal: ac.signal,
    });
    const reader = res.body!.getReader();
    await reader.read();
    ac.abort();
    const t = Date.now();
    await engine.close();
    engine = undefined;
    expect(Date.now() - t).toBeLessThan(1000);
  });
});
