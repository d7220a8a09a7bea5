// Context windows as each engine states them (docs/hub-dialect.md): vLLM / SGLang max_model_len in
// /v1/models ('detected'), llama.cpp /props default_generation_settings.n_ctx (else /v1/models meta.n_ctx)
// and Ollama's num_ctx (POST /api/show, else the loaded model's /api/ps context_length) ('engine': not
// "detected" as the hub uses the word); Ollama's trained maximum is never its window; the models.json
// override wins; a window once known is kept while the engine does not answer.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ContextLengths, detectContextLength } from '../../../src/core/engine-client/context-length';
import { startTestEngine, type TestEngine } from '../../support/engine-server';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

async function engine(opts: Parameters<typeof startTestEngine>[0]): Promise<TestEngine> {
  const e = await startTestEngine(opts);
  closers.push(() => e.close());
  return e;
}

/** An Ollama stand-in for POST /api/show and GET /api/ps, answering as Ollama's API docs show. */
async function ollamaShow(body: Record<string, unknown>, ps: Array<Record<string, unknown>> = []): Promise<{ url: string; asked: unknown[] }> {
  const asked: unknown[] = [];
  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/api/show') {
        asked.push(JSON.parse(text));
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      } else if (req.method === 'GET' && req.url === '/api/ps') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ models: ps }));
      } else {
        res.writeHead(404);
        res.end();
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(() => new Promise((r) => server.close(() => r())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, asked };
}

describe('detectContextLength', () => {
  it('vLLM and SGLang: max_model_len of the model in /v1/models (their captured answers)', async () => {
    const v = await engine({ engineType: 'vllm' });
    expect(await detectContextLength(v.url, 'Qwen2.5-1.5B-Instruct', 'vllm')).toEqual({ length: 4096, source: 'detected', via: '/v1/models max_model_len' });
    const s = await engine({ engineType: 'sglang' });
    expect((await detectContextLength(`${s.url}/v1`, 'Qwen/Qwen3-0.6B', 'sglang'))?.length).toBe(40960);
  });

  it('llama.cpp: /props default_generation_settings.n_ctx, stated by the engine but not "detected"', async () => {
    const l = await engine({ engineType: 'llamacpp' });
    expect(await detectContextLength(l.url, 'Qwen2.5-1.5B-Instruct-Q4_K_M.gguf', 'llamacpp')).toEqual({
      length: 16384,
      source: 'engine',
      via: 'llama.cpp /props n_ctx',
    });
  });

  it('llama.cpp without /props: meta.n_ctx of its /v1/models (even under another name: one model served)', async () => {
    const l = await engine({ engineType: 'openai', models: undefined });
    // An OpenAI-compatible list without windows: nothing detected.
    expect(await detectContextLength(l.url, 'whatever', 'llamacpp')).toBeUndefined();
    const real = await engine({ engineType: 'llamacpp' });
    const server = http.createServer((req, res) => {
      if (req.url === '/v1/models') {
        void fetch(`${real.url}/v1/models`).then(async (r) => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(await r.text());
        });
      } else {
        res.writeHead(404);
        res.end();
      }
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    closers.push(() => new Promise((r) => server.close(() => r())));
    expect(await detectContextLength(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, 'my-alias', 'llamacpp')).toMatchObject({
      length: 16384,
      source: 'engine',
    });
  });

  it('Ollama: its serving window num_ctx (the parameter, else the loaded model in /api/ps), never the trained maximum', async () => {
    const withParam = await ollamaShow({
      parameters: 'num_ctx                        8192\nstop                           "<|eot_id|>"',
      model_info: { 'general.architecture': 'llama', 'llama.context_length': 131072 },
    });
    expect(await detectContextLength(withParam.url, 'llama3.2:3b', 'ollama')).toEqual({ length: 8192, source: 'engine', via: 'Ollama num_ctx' });
    expect(withParam.asked).toEqual([{ model: 'llama3.2:3b' }]);
    // Only the trained maximum: a prompt past the default num_ctx would be silently truncated, so no window is claimed.
    const infoOnly = await ollamaShow({ model_info: { 'general.architecture': 'gemma3', 'gemma3.context_length': 131072 } });
    expect(await detectContextLength(infoOnly.url, 'gemma3:4b', 'ollama')).toBeUndefined();
    const loaded = await ollamaShow({ model_info: { 'gemma3.context_length': 131072 } }, [{ name: 'gemma3:4b', model: 'gemma3:4b', context_length: 4096 }]);
    expect(await detectContextLength(loaded.url, 'gemma3:4b', 'ollama')).toEqual({
      length: 4096,
      source: 'engine',
      via: 'Ollama /api/ps context_length (loaded)',
    });
  });

  it('an engine that is down gives nothing, without throwing', async () => {
    expect(await detectContextLength('http://127.0.0.1:9', 'm', 'vllm', { timeoutMs: 500 })).toBeUndefined();
  });
});

describe('ContextLengths', () => {
  it('override > detected > unknown; a probed engine type is remembered; a window survives an engine outage', async () => {
    const v = await engine({ engineType: 'vllm' });
    const c = new ContextLengths({ timeoutMs: 1000 });
    let changes = 0;
    c.on('change', () => changes++);
    expect(c.get('a')).toEqual({ length: 0, source: 'pending' });
    await c.refresh([
      { model: 'a', endpoints: [{ url: v.url, localModel: 'Qwen2.5-1.5B-Instruct' }] },
      { model: 'b', endpoints: [{ url: v.url, localModel: 'Qwen2.5-1.5B-Instruct' }], override: 2048 },
      { model: 'c', endpoints: [{ url: v.url, localModel: 'not-listed' }, { url: 'http://127.0.0.1:9' }] },
    ]);
    expect(c.get('a')).toEqual({ length: 4096, source: 'detected', via: '/v1/models max_model_len' });
    expect(c.get('b')).toEqual({ length: 2048, source: 'override' });
    expect(c.get('c')).toEqual({ length: 0, source: 'unknown' });
    expect(c.typeOf(v.url)).toBe('vllm');
    expect(changes).toBeGreaterThan(0);
    await v.setMode('down');
    const before = changes;
    await c.refresh([{ model: 'a', endpoints: [{ url: v.url, localModel: 'Qwen2.5-1.5B-Instruct' }] }]);
    expect(c.get('a')).toEqual({ length: 4096, source: 'detected', via: '/v1/models max_model_len' });
    expect(changes).toBe(before);
  });
});
