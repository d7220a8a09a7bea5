// The agent against the real dev hub and real test engines: registration, health, heartbeat,
// stream and non-stream relay, and the request forms of seed 000 + DESIGN.md.
import { afterEach, describe, expect, it } from 'vitest';
import { summarizeTrace, generatedText } from '../../support/traces';
import { modelOf, chat, lastStatus, chunkText, readSse, registered, startStack, until, type Stack } from '../../support/stack';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

describe('registration, health and heartbeat', () => {
  it('registers with every documented field, then sends model health, then heartbeats', async () => {
    stack = await startStack({ models: { 'meta-llama/Llama-3.2-3B-Instruct': { engine: 0 } } });
    await registered(stack);
    const p = stack.hub!.providers()[0]!;
    expect(p.nodeId).toMatch(/^04[0-9a-f]{128}$/);
    expect(p.nodeId).toBe(stack.agent.identity.nodeId);
    expect(p.nodeName).toBe('test-node');
    expect(p.models).toEqual(['meta-llama/Llama-3.2-3B-Instruct']);
    expect(p.capabilities.slice(0, 2)).toEqual(['inference', 'verification']);
    expect(p.capabilities).toEqual(expect.arrayContaining(['resume-v1', 'stream']));
    // GPU detection is off in this stack: no GPU, so no hardware block at all (Go's nil *HardwareInfo).
    expect(p.hardware).toEqual({});
    await until(() => stack!.hub!.received.some((m) => m.type === 'heartbeat'), 'a heartbeat');
    const types = stack.hub!.received.map((m) => m.type);
    expect(types[0]).toBe('model_health_update');
    expect(stack.hub!.received[0]!.payload.model_health).toEqual({ 'meta-llama/Llama-3.2-3B-Instruct': 'healthy' });
    const hb = stack.hub!.received.find((m) => m.type === 'heartbeat')!.payload;
    expect(hb.node_id).toBe(p.nodeId);
    expect(hb.models).toEqual(['meta-llama/Llama-3.2-3B-Instruct']);
    expect(hb.model_health).toEqual({ 'meta-llama/Llama-3.2-3B-Instruct': 'healthy' });
    expect(typeof hb.timestamp).toBe('number');
    expect(hb.metrics).toEqual(
      expect.objectContaining({
        active_requests: 0,
        gpu_utilization: 0,
        memory_utilization: 0,
        total_requests: 0,
        requests_per_minute: 0,
        avg_latency_ms: 0,
        tokens_per_second: 0,
      }),
    );
  });

  it('engine down (refused) -> unhealthy at once -> healthy again, each announced', async () => {
    stack = await startStack();
    await registered(stack);
    const model = stack.engines[0]!.modelIds[0]!;
    const healthOf = () =>
      stack!.hub!.received.filter((m) => m.type === 'model_health_update').map((m) => (m.payload.model_health as Record<string, string>)[model]);
    await stack.engines[0]!.setMode('down');
    await until(() => healthOf().includes('unhealthy'), 'unhealthy announced');
    await stack.engines[0]!.setMode('ok');
    await until(() => healthOf().at(-1) === 'healthy', 'healthy again');
    const seq = healthOf();
    // A refused connection is not a maybe: no degraded step in between.
    expect(seq.indexOf('degraded')).toBe(-1);
    expect(seq.indexOf('unhealthy')).toBeGreaterThan(0);
    expect(stack.agent.snapshot().models[0]?.endpoints[0]?.condition).toBeUndefined();
  });

  it('requests for an unhealthy model fail at once', async () => {
    stack = await startStack();
    await registered(stack);
    const model = stack.engines[0]!.modelIds[0]!;
    await stack.engines[0]!.setMode('down');
    await until(() => modelOf(stack!.agent, model)?.health === 'unhealthy', 'model unhealthy');
    // The dev hub would skip an unhealthy provider; send the inference straight to the agent instead.
    const reply = await stack.hub!.call(
      stack.hub!.providers()[0]!.nodeId,
      'inference',
      { model_id: model, stream: true, request: { model, messages: [{ role: 'user', content: 'hi' }] } },
      'stream_end',
      3000,
    );
    // A refusal takes the stream's result path: an error chunk first, then stream_end with the status.
    expect(reply._type).toBe('stream_end');
    expect(reply.status_code).toBe(503);
    expect(String(reply.error)).toMatch(/temporarily unavailable/i);
    const first = stack.hub!.received.find((m) => m.payload.request_id === reply.request_id)!;
    expect(first).toMatchObject({ type: 'stream_chunk', requestId: reply.request_id, payload: { chunk: null, done: true, error: expect.any(String) } });
  });
});

describe('inference relay', () => {
  it('relays a streamed answer verbatim and ends with usage from the engine', async () => {
    stack = await startStack({ engines: [{ chatTrace: 'vllm-chat-reasoning-include-usage.sse' }] });
    await registered(stack);
    const model = stack.engines[0]!.modelIds[0]!;
    const res = await chat(stack.hub!, { model, stream: true, messages: [{ role: 'user', content: 'hi' }] });
    expect(res.status).toBe(200);
    const events = await readSse(res);
    const trace = summarizeTrace('vllm-chat-reasoning-include-usage.sse');
    expect(chunkText(events)).toBe(trace.text);
    expect(events.at(-1)).toBe('[DONE]');
    await until(() => stack!.hub!.received.some((m) => m.type === 'stream_end'), 'stream_end');
    const end = stack.hub!.received.find((m) => m.type === 'stream_end')!.payload;
    expect(end.tokens_input).toBe(trace.usage!.prompt_tokens);
    expect(end.tokens_output).toBe(trace.usage!.completion_tokens);
    expect(end.latency_ms).toEqual(expect.any(Number));
    expect(end.status_code).toBeUndefined();
    const chunks = stack.hub!.received.filter((m) => m.type === 'stream_chunk');
    expect(chunks.at(-1)!.payload).toMatchObject({ chunk: null, done: true });
    // seq is monotonic from 1 across chunks and the end
    const seqs = [...chunks, stack.hub!.received.find((m) => m.type === 'stream_end')!].map((m) => m.payload.seq);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    // the engine was asked to stream with usage
    const body = stack.engines[0]!.requests.find((r) => r.path === '/v1/chat/completions')!.body as Record<string, unknown>;
    expect(body.stream).toBe(true);
    expect(body.stream_options).toEqual({ include_usage: true });
  });

  it('answers a non-stream request with the engine JSON in an ack', async () => {
    stack = await startStack();
    await registered(stack);
    const model = stack.engines[0]!.modelIds[0]!;
    const res = await chat(stack.hub!, { model, messages: [{ role: 'user', content: 'hi' }] });
    expect(res.status).toBe(200);
    const json = (await res.json()) as { choices: Array<{ message: { content: string } }> };
    expect(json.choices[0]!.message.content).toBe(summarizeTrace('vllm-chat-basic.sse').text);
    const ack = stack.hub!.received.find((m) => m.type === 'ack')!.payload;
    expect(ack).toMatchObject({ status_code: 200, latency_ms: expect.any(Number) });
  });

  it('uses /v1/completions for a prompt, substitutes local_model and sends the Bearer api_key', async () => {
    stack = await startStack({
      engines: [{ apiKey: 'engine-secret' }],
      models: { 'public/name': { engine: 0, local_model: 'local-name', api_key: 'engine-secret' } },
    });
    await registered(stack);
    const res = await fetch(`${stack.hub!.url}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'public/name', prompt: 'Once upon', stream: true, max_tokens: 8 }),
    });
    expect(res.status).toBe(200);
    const events = await readSse(res);
    expect(chunkText(events)).toBe(summarizeTrace('vllm-completions-include-usage.sse').text);
    const req = stack.engines[0]!.requests.find((r) => r.path === '/v1/completions')!;
    expect((req.body as { model: string }).model).toBe('local-name');
    expect(req.headers.authorization).toBe('Bearer engine-secret');
  });

  it('reports an engine HTTP error with its status and message', async () => {
    stack = await startStack({
      engines: [{ mode: { status: 400, body: { object: 'error', message: 'max_tokens is too large', type: 'BadRequestError', code: 400 } } }],
    });
    await registered(stack);
    const model = stack.engines[0]!.modelIds[0]!;
    const res = await chat(stack.hub!, { model, stream: true, messages: [{ role: 'user', content: 'hi' }] });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('max_tokens is too large');
    const end = stack.hub!.received.find((m) => m.type === 'stream_end')!.payload;
    expect(end).toMatchObject({ status_code: 400, error: expect.stringContaining('max_tokens is too large') });
  });

  it('ends a stream the engine drops with status 502 and an error', async () => {
    stack = await startStack({ engines: [{ mode: { generate: 50, dropAfterEvents: 5 } }] });
    await registered(stack);
    const model = stack.engines[0]!.modelIds[0]!;
    const res = await chat(stack.hub!, { model, stream: true, messages: [{ role: 'user', content: 'hi' }] });
    const events = await readSse(res);
    expect(events.some((e) => typeof e === 'object' && e !== null && 'error' in e)).toBe(true);
    await until(() => stack!.hub!.received.some((m) => m.type === 'stream_end'), 'stream_end');
    const end = stack.hub!.received.find((m) => m.type === 'stream_end')!.payload;
    expect(end.status_code).toBe(502);
    expect(String(end.error)).not.toBe('');
    expect(stack.hub!.received.some((m) => m.type === 'stream_chunk' && m.payload.done === true)).toBe(false);
  });

  it('answers an unknown model with an error carrying the request id, at once', async () => {
    stack = await startStack();
    await registered(stack);
    const nodeId = stack.hub!.providers()[0]!.nodeId;
    const reply = await stack.hub!.call(
      nodeId,
      'inference',
      { model_id: 'no/such-model', stream: true, request: { model: 'no/such-model', messages: [] } },
      'stream_end',
      2000,
    );
    expect(reply).toMatchObject({ _type: 'stream_end', status_code: 404, error: expect.any(String), request_id: expect.any(String) });
    const nonStream = await stack.hub!.call(nodeId, 'inference', { model_id: 'no/such-model', request: { model: 'no/such-model', messages: [] } }, 'ack', 2000);
    expect(nonStream).toMatchObject({ _type: 'ack', status_code: 404, response: null, error: expect.any(String), request_id: expect.any(String) });
    expect(stack.hub!.received.some((m) => m.type === 'error')).toBe(false);
  });

  it('keeps 16 concurrent streams apart', async () => {
    stack = await startStack({ engines: [{ mode: { generate: 40, delayMs: 1 } }], agent: { MaxConcurrentPerEndpoint: 16 } });
    await registered(stack);
    const model = stack.engines[0]!.modelIds[0]!;
    const sizes = Array.from({ length: 16 }, (_, i) => 5 + i);
    const texts = await Promise.all(
      sizes.map(async (n) =>
        chunkText(await readSse(await chat(stack!.hub!, { model, stream: true, max_tokens: n, messages: [{ role: 'user', content: `r${n}` }] }))),
      ),
    );
    expect(texts).toEqual(sizes.map((n) => generatedText(n)));
  });

  it('aborts the engine request when the client goes away (hub cancel)', async () => {
    stack = await startStack({ engines: [{ mode: { generate: 10_000, delayMs: 5 } }] });
    await registered(stack);
    const model = stack.engines[0]!.modelIds[0]!;
    const ctl = new AbortController();
    const res = await chat(stack.hub!, { model, stream: true, messages: [{ role: 'user', content: 'long' }] }, { signal: ctl.signal });
    const reader = res.body!.getReader();
    await reader.read();
    ctl.abort();
    await stack.engines[0]!.waitForAbort(1);
    await until(async () => (await lastStatus(stack!.agent)) === 'cancelled', 'request marked cancelled');
  });

  it('warms a model up and acks with load time, memory and success', async () => {
    stack = await startStack();
    await registered(stack);
    const model = stack.engines[0]!.modelIds[0]!;
    const res = await fetch(`${stack.hub!.url}/dev/warmup`, { method: 'POST', body: JSON.stringify({ model_id: model, warmup_type: 'inference' }) });
    const ack = (await res.json()) as Record<string, unknown>;
    expect(ack).toMatchObject({ _type: 'ack', model_id: model, success: true, load_time_ms: expect.any(Number), memory_mb: expect.any(Number) });
  });
});
