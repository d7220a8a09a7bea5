// The engine-call service against engines on 127.0.0.1: the one retry of a transient failure (Go's
// TestHandleInferenceEnforcement: a 502 before any byte is tried once more; a 400 never; nothing after a byte
// has gone out), and the operations (operations.go: declared, then the model's category, then the body's
// shape; non-chat answers whole; usage names mapped so nothing is billed as zero).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ModelRegistry } from '../../../src/core/models/registry';
import { syncScheduler } from '../../../src/core/engines/scheduler-sync';
import type { ModelEntry } from '../../../src/core/config/config';
import { InferenceRunner, EngineCallError } from '../../../src/core/inference/runner';
import { memoryLog } from '../../../src/core/base/log';
import { RequestBook } from '../../../src/core/inference/requests';
import { Scheduler } from '../../../src/core/scheduler/scheduler';
import { embeddingsEngine, flakyVllm, type StandInEngine } from '../../support/conformance/engines';
import { startTestEngine, type TestEngine } from '../../support/engine-server';

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

function service(entries: Record<string, ModelEntry>) {
  const registry = new ModelRegistry();
  registry.rebuild({ entries, configModels: [], engines: [], prefs: {} });
  const scheduler = new Scheduler({ maxConcurrentPerEndpoint: 4 });
  syncScheduler(registry, scheduler, { maxConcurrentPerEndpoint: 4, capacityAuto: false } as never);
  const book = new RequestBook();
  const trouble: string[] = [];
  const runner = new InferenceRunner({
    registry,
    book,
    admit: (m, o) => scheduler.admit(m, o),
    admitOn: (url) => scheduler.admitOn(url),
    log: memoryLog().child('t'),
    retryDelayMs: 10,
    onEngineTrouble: (_url, condition) => trouble.push(condition),
  });
  closers.push(async () => scheduler.close());
  return { runner, book, trouble };
}

async function standIn(p: Promise<StandInEngine>): Promise<StandInEngine> {
  const e = await p;
  closers.push(() => e.close());
  return e;
}

async function engine(opts: Parameters<typeof startTestEngine>[0]): Promise<TestEngine> {
  const e = await startTestEngine(opts);
  closers.push(() => e.close());
  return e;
}

const chat = (extra: Record<string, unknown> = {}) => ({ model: 'm', messages: [{ role: 'user', content: 'hi' }], ...extra });
const signal = () => new AbortController().signal;

describe('the one retry of a transient engine failure', () => {
  for (const stream of [true, false]) {
    it(`a 502 before any byte is tried once more and served (${stream ? 'stream' : 'non-stream'})`, async () => {
      const e = await standIn(flakyVllm('m'));
      const { runner } = service({ m: { endpoint: e.url } });
      const chunks: unknown[] = [];
      const r = await runner.run(
        { id: 'h1', purpose: 'hub', model: 'm', body: chat({ stream }), stream, signal: signal() },
        { chunk: (ev) => void chunks.push(ev) },
      );
      expect(r).toMatchObject({ status: 'ok', statusCode: 200, tokensIn: 3, tokensOut: 1 });
      expect(e.generations()).toHaveLength(2);
      if (stream) expect(chunks.length).toBeGreaterThan(0);
    });
  }

  it('a connection reset before the answer is tried once more; a refused one is reported (down), tried once more, and fails as unreachable', async () => {
    let first = true;
    const upstream = await engine({ mode: { generate: 2 } });
    // A proxy that drops the first connection (as an engine restarting does), then forwards.
    const proxy = http.createServer((req, res) => {
      if (first) {
        first = false;
        req.socket.destroy();
        return;
      }
      const fwd = http.request(`${upstream.url}${req.url ?? '/'}`, { method: req.method, headers: req.headers }, (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      });
      req.pipe(fwd);
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    closers.push(() => new Promise((r) => proxy.close(r)));
    const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    const { runner, trouble } = service({ m: { endpoint: url } });
    const r = await runner.run({ id: 'h2', purpose: 'hub', model: 'm', body: chat({ stream: true }), stream: true, signal: signal() });
    expect(r).toMatchObject({ status: 'ok', tokensOut: 2 });
    expect(upstream.requests.filter((q) => q.method === 'POST')).toHaveLength(1);
    expect(trouble).toEqual(['suspect']);

    const gone = await engine({});
    const port = gone.port;
    await gone.close();
    const s2 = service({ m: { endpoint: `http://127.0.0.1:${port}` } });
    const refused = await s2.runner.run({ id: 'h3', purpose: 'hub', model: 'm', body: chat(), stream: false, signal: signal() });
    expect(refused).toMatchObject({ status: 'error', statusCode: 502, noAnswer: 'ECONNREFUSED' });
    expect(s2.trouble).toEqual(['down']);
  });

  it('a 400 is not retried; nothing is retried once a byte has gone to the client', async () => {
    const bad = await engine({ mode: { status: 400, body: { object: 'error', message: 'max_tokens is too large', type: 'BadRequestError', code: 400 } } });
    const s = service({ m: { endpoint: bad.url } });
    const r = await s.runner.run({ id: 'h4', purpose: 'hub', model: 'm', body: chat({ stream: true }), stream: true, signal: signal() });
    expect(r).toMatchObject({ status: 'error', statusCode: 400 });
    expect(bad.requests.filter((q) => q.method === 'POST')).toHaveLength(1);

    const dropping = await engine({ mode: { generate: 50, dropAfterEvents: 3 } });
    const d = service({ m: { endpoint: dropping.url } });
    const chunks: unknown[] = [];
    const cut = await d.runner.run(
      { id: 'h5', purpose: 'hub', model: 'm', body: chat({ stream: true }), stream: true, signal: signal() },
      { chunk: (ev) => void chunks.push(ev) },
    );
    expect(chunks.length).toBeGreaterThan(0);
    expect(cut).toMatchObject({ status: 'error', statusCode: 502 });
    expect(dropping.requests.filter((q) => q.method === 'POST')).toHaveLength(1);
  });

  it('only client traffic is retried: a verify generation that meets a 502 fails at once', async () => {
    const e = await standIn(flakyVllm('m'));
    const { runner } = service({ m: { endpoint: e.url } });
    const err = await runner.generate({ purpose: 'verify', model: 'm', operation: 'chat/completions', body: chat() }).catch((x: unknown) => x);
    expect(err).toBeInstanceOf(EngineCallError);
    expect((err as EngineCallError).statusCode).toBe(502);
    expect(e.generations()).toHaveLength(1);
  });
});

describe('operations', () => {
  it("the hub's operation routes the request: embeddings to /v1/embeddings, answered whole even when a stream was asked", async () => {
    const e = await standIn(embeddingsEngine({ embed: 'bge', image: 'sdxl' }));
    const { runner, book } = service({ bge: { endpoint: e.url }, sdxl: { endpoint: e.url } });
    const r = await runner.run({
      id: 'op1',
      purpose: 'hub',
      model: 'bge',
      operation: 'embeddings',
      body: { model: 'bge', input: ['one two three', 'four'] },
      stream: true,
      signal: signal(),
    });
    expect(r).toMatchObject({ status: 'ok', streamed: false, operation: 'embeddings', tokensIn: 4, tokensOut: 0, estimated: false });
    expect(r.response).toMatchObject({ object: 'list', data: [{ index: 0 }, { index: 1 }], usage: { prompt_tokens: 4 } });
    expect(e.generations().map((g) => g.path)).toEqual(['/v1/embeddings']);
    expect(book.get('op1')).toMatchObject({ source: 'hub', purpose: 'hub', status: 'ok', tokensIn: 4 });
  });

  it('without an operation the category decides, then the shape; input/output usage is billed under the chat names', async () => {
    const e = await standIn(embeddingsEngine({ embed: 'bge', image: 'sdxl' }));
    const { runner } = service({ sdxl: { endpoint: e.url, category: 'image' }, bge: { endpoint: e.url }, whisper: { endpoint: e.url } });
    const img = await runner.run({
      id: 'op2',
      purpose: 'hub',
      model: 'sdxl',
      body: { model: 'sdxl', prompt: 'a red fox', size: '1024x1024' },
      stream: false,
      signal: signal(),
    });
    expect(img).toMatchObject({ status: 'ok', operation: 'images/generations', tokensIn: 12, tokensOut: 4160 });
    expect(img.response).toMatchObject({ usage: { input_tokens: 12, output_tokens: 4160, prompt_tokens: 12, completion_tokens: 4160 } });
    const emb = await runner.run({ id: 'op3', purpose: 'hub', model: 'bge', body: { model: 'bge', input: 'hello' }, stream: false, signal: signal() });
    expect(emb).toMatchObject({ status: 'ok', operation: 'embeddings', tokensIn: 1 });
    const audio = Buffer.from('RIFF....WAVEfmt fake audio bytes').toString('base64');
    const tr = await runner.run({
      id: 'op4',
      purpose: 'hub',
      model: 'whisper',
      body: { model: 'whisper', file: audio, filename: 'clip.wav', language: 'en' },
      stream: false,
      signal: signal(),
    });
    expect(tr).toMatchObject({ status: 'ok', operation: 'audio/transcriptions', tokensIn: 20, tokensOut: 2 });
    expect(tr.response).toMatchObject({ text: 'hello there', usage: { prompt_tokens: 20, completion_tokens: 2 } });
    const upload = e.generations().find((g) => g.path === '/v1/audio/transcriptions')!;
    // The engine got OpenAI's multipart upload: the file's own bytes, and the other fields as form fields.
    expect(upload.contentType).toMatch(/^multipart\/form-data; boundary=/);
    expect(String(upload.body._raw)).toContain('name="model"\r\n\r\nwhisper');
    expect(String(upload.body._raw)).toContain('filename="clip.wav"');
    expect(String(upload.body._raw)).toContain('RIFF....WAVEfmt fake audio bytes');
    expect(e.generations().map((g) => g.path)).toEqual(['/v1/images/generations', '/v1/embeddings', '/v1/audio/transcriptions']);
  });
});
