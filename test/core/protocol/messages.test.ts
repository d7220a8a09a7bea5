// The hub protocol: parseInbound for every inbound type (valid and invalid frames; errors carry the
// request id when the frame had one), and the outbound builders' shapes per seed 000 and DESIGN.md.
import { describe, expect, it } from 'vitest';
import { CAPABILITIES, encode, InboundError, MAX_MESSAGE_BYTES, out, parseInbound, PROTOCOL_VERSION, type RegisterPayload } from '../../../src/core/protocol/messages';

const frame = (o: unknown): string => JSON.stringify(o);

/** The InboundError parseInbound throws for `text` (fails the test when it parses). */
function refused(text: string): InboundError {
  try {
    parseInbound(text);
  } catch (e) {
    expect(e).toBeInstanceOf(InboundError);
    return e as InboundError;
  }
  throw new Error(`accepted: ${text}`);
}

const chatRequest = { model: 'meta-llama/Llama-3.2-3B-Instruct', messages: [{ role: 'user', content: 'hi' }], max_tokens: 512 };

describe('parseInbound: inference', () => {
  it('accepts the seed 000 form and keeps the OpenAI body verbatim (unknown fields included)', () => {
    const request = { ...chatRequest, temperature: 0.2, logit_bias: { '50256': -100 }, stream_options: { include_usage: true } };
    const m = parseInbound(frame({ type: 'inference', request_id: 'req-1', payload: { endpoint_id: 'ep-9', model_id: 'meta-llama/Llama-3.2-3B-Instruct', stream: true, request } }));
    expect(m).toEqual({ type: 'inference', requestId: 'req-1', payload: { endpoint_id: 'ep-9', model_id: 'meta-llama/Llama-3.2-3B-Instruct', stream: true, request } });
  });

  it('accepts a completions request (prompt instead of messages), string or array, and stream omitted', () => {
    for (const prompt of ['Once upon', ['a', 'b'], [1, 2, 3]]) {
      const m = parseInbound(frame({ type: 'inference', request_id: 'r', payload: { model_id: 'm', request: { prompt } } }));
      expect(m.type).toBe('inference');
      if (m.type === 'inference') {
        expect(m.payload.request.prompt).toEqual(prompt);
        expect(m.payload.stream).toBeUndefined();
      }
    }
  });

  it('takes the request id from the payload when the envelope has none', () => {
    const m = parseInbound(frame({ type: 'inference', payload: { request_id: 'in-payload', model_id: 'm', request: chatRequest } }));
    expect(m).toMatchObject({ type: 'inference', requestId: 'in-payload' });
  });

  it('refuses a request with neither messages nor prompt, naming the request id', () => {
    const e = refused(frame({ type: 'inference', request_id: 'r-2', payload: { model_id: 'm', request: { model: 'm', max_tokens: 5 } } }));
    expect(e.message).toBe('invalid inference payload: request: request needs "messages" or "prompt"');
    expect(e.requestId).toBe('r-2');
    expect(e.messageType).toBe('inference');
  });

  it.each([
    ['no model_id', { request: chatRequest }, 'model_id'],
    ['empty model_id', { model_id: '', request: chatRequest }, 'model_id'],
    ['no request', { model_id: 'm' }, 'request'],
    ['stream not a boolean', { model_id: 'm', stream: 'yes', request: chatRequest }, 'stream'],
    ['messages not an array', { model_id: 'm', request: { messages: 'hi' } }, 'request.messages'],
    ['prompt a number', { model_id: 'm', request: { prompt: 5 } }, 'request.prompt'],
    ['payload a string', 'hello', '(payload)'],
  ])('refuses %s with the request id and the field', (_name, payload, field) => {
    const e = refused(frame({ type: 'inference', request_id: 'rid', payload }));
    expect(e.requestId).toBe('rid');
    expect(e.message).toMatch(/^invalid inference payload: /);
    expect(e.message).toContain(`${field}:`);
  });

  it('refuses an inference without any request id (nothing to answer to)', () => {
    const e = refused(frame({ type: 'inference', payload: { model_id: 'm', request: chatRequest } }));
    expect(e.message).toBe('inference without request_id');
    expect(e.requestId).toBeUndefined();
  });
});

describe('parseInbound: other types', () => {
  it('ack, with the hub fields kept', () => {
    const m = parseInbound(frame({ type: 'ack', request_id: 'reg-1', payload: { request_id: 'reg-1', success: true, message: 'registered successfully', extra: 1 } }));
    expect(m).toEqual({ type: 'ack', requestId: 'reg-1', payload: { request_id: 'reg-1', success: true, message: 'registered successfully', extra: 1 } });
    expect(parseInbound(frame({ type: 'ack' }))).toEqual({ type: 'ack', requestId: undefined, payload: {} });
  });

  it('ack with a wrong field type is refused with its id', () => {
    const e = refused(frame({ type: 'ack', request_id: 'a1', payload: { success: 'yes' } }));
    expect(e.requestId).toBe('a1');
    expect(e.message).toContain('success:');
  });

  it('error, with a numeric or string code; the id may be only in the payload', () => {
    expect(parseInbound(frame({ type: 'error', payload: { request_id: 'r', code: 401, message: 'invalid provider API key' } }))).toEqual({
      type: 'error',
      requestId: 'r',
      payload: { request_id: 'r', code: 401, message: 'invalid provider API key' },
    });
    expect(parseInbound(frame({ type: 'error', payload: { code: 'rate_limited' } }))).toMatchObject({ type: 'error', payload: { code: 'rate_limited' } });
    expect(refused(frame({ type: 'error', request_id: 'e1', payload: { code: true } })).requestId).toBe('e1');
  });

  it('warmup, with or without a request id', () => {
    expect(parseInbound(frame({ type: 'warmup', payload: { model_id: 'm', warmup_type: 'inference' } }))).toEqual({
      type: 'warmup',
      requestId: undefined,
      payload: { model_id: 'm', warmup_type: 'inference' },
    });
    expect(parseInbound(frame({ type: 'warmup', request_id: 'w1', payload: { model_id: 'm' } }))).toMatchObject({ requestId: 'w1' });
  });

  it('warmup without a model is refused with its id', () => {
    const e = refused(frame({ type: 'warmup', request_id: 'w2', payload: {} }));
    expect(e.requestId).toBe('w2');
    expect(e.message).toContain('model_id:');
  });

  it('verify and benchmark pass their payload on (checked by their handlers)', () => {
    const verify = { challenge_id: 'c', challenge_type: 'fingerprint', model_id: 'm', challenge: { files: [] } };
    expect(parseInbound(frame({ type: 'verify', request_id: 'v', payload: verify }))).toEqual({ type: 'verify', requestId: 'v', payload: verify });
    expect(parseInbound(frame({ type: 'benchmark' }))).toEqual({ type: 'benchmark', requestId: undefined, payload: {} });
  });

  it('cancel with the request id at the top level, in the payload, or both (payload wins)', () => {
    expect(parseInbound(frame({ type: 'cancel', request_id: 'top' }))).toEqual({ type: 'cancel', requestId: 'top' });
    expect(parseInbound(frame({ type: 'cancel', payload: { request_id: 'inner' } }))).toEqual({ type: 'cancel', requestId: 'inner' });
    expect(parseInbound(frame({ type: 'cancel', request_id: 'top', payload: { request_id: 'inner' } }))).toEqual({ type: 'cancel', requestId: 'inner' });
  });

  it('cancel without any request id, or with an empty one, is refused', () => {
    expect(refused(frame({ type: 'cancel', payload: {} })).message).toBe('cancel without request_id');
    expect(refused(frame({ type: 'cancel', request_id: 'x', payload: { request_id: '' } })).message).toMatch(/^invalid cancel payload: request_id:/);
  });

  it('resume with the id in the payload or at the top level', () => {
    expect(parseInbound(frame({ type: 'resume', payload: { request_id: 'r1', last_seq: 0 } }))).toEqual({ type: 'resume', requestId: 'r1', lastSeq: 0 });
    expect(parseInbound(frame({ type: 'resume', request_id: 'r2', payload: { last_seq: 7 } }))).toEqual({ type: 'resume', requestId: 'r2', lastSeq: 7 });
  });

  it.each([
    ['negative last_seq', { request_id: 'r', last_seq: -1 }, 'last_seq'],
    ['fractional last_seq', { request_id: 'r', last_seq: 1.5 }, 'last_seq'],
    ['no last_seq', { request_id: 'r' }, 'last_seq'],
  ])('resume with %s is refused with its id', (_name, payload, field) => {
    const e = refused(frame({ type: 'resume', payload }));
    expect(e.requestId).toBe('r');
    expect(e.message).toContain(`${field}:`);
  });

  it('resume without any request id is refused', () => {
    expect(refused(frame({ type: 'resume', payload: { last_seq: 1 } })).message).toBe('resume without request_id');
  });
});

describe('parseInbound: malformed frames', () => {
  it('invalid JSON', () => {
    const e = refused('{"type": "inference", ');
    expect(e.message).toBe('message is not valid JSON');
    expect(e.requestId).toBeUndefined();
  });

  it.each([
    ['an array', '[1,2]'],
    ['null', 'null'],
    ['a string', '"inference"'],
    ['no type', '{"payload":{}}'],
    ['an empty type', '{"type":""}'],
    ['a numeric type', '{"type":5}'],
    ['a numeric request_id', '{"type":"ack","request_id":5}'],
    ['an overlong type', frame({ type: 'x'.repeat(65) })],
  ])('no valid envelope: %s', (_name, text) => {
    expect(refused(text).message).toMatch(/^message has no valid envelope \(.+\)$/);
  });

  it('unknown type: refused, naming the type and carrying the request id', () => {
    const e = refused(frame({ type: 'teleport', request_id: 'u1', payload: {} }));
    expect(e.message).toBe('unknown message type "teleport"');
    expect(e.requestId).toBe('u1');
    expect(e.messageType).toBe('teleport');
    expect(refused(frame({ type: 'teleport', payload: { request_id: 'u2' } })).requestId).toBe('u2');
  });
});

describe('outbound builders (seed 000 + DESIGN.md shapes)', () => {
  const register: RegisterPayload = {
    node_id: 'a'.repeat(64),
    provider_id: 'a'.repeat(64),
    node_name: 'rig',
    token: 'sk-prov-x',
    models: ['m1'],
    model_hashes: [{ model_id: 'm1', weight_hash: '', hash_algo: 'sha256', format: 'gguf', quantization: 'q4_k_m' }],
    capabilities: [...CAPABILITIES],
    protocol_version: PROTOCOL_VERSION,
    hardware: { gpu_type: 'rtx3080', gpu_model: 'NVIDIA RTX 3080', vram_gb: 10, gpu_count: 1, serving_engine: 'sglang', compute_capability: '8.6', driver_version: '550', cuda_version: '12.4' },
  };

  it('register carries every documented field plus provider_id, model_hashes and capabilities', () => {
    const m = JSON.parse(encode(out.register('reg-uuid', register))) as { type: string; request_id: string; payload: Record<string, unknown> };
    expect(m.type).toBe('register');
    expect(m.request_id).toBe('reg-uuid');
    expect(Object.keys(m.payload).sort()).toEqual(['capabilities', 'hardware', 'model_hashes', 'models', 'node_id', 'node_name', 'protocol_version', 'provider_id', 'token'].sort());
    expect(m.payload).toEqual(register);
    expect(m.payload.capabilities).toEqual(expect.arrayContaining(['stream', 'warmup', 'verify', 'benchmark', 'resume-v1', 'cancel']));
  });

  it('register copies its payload (a later change to the input does not leak into the message)', () => {
    const input = { ...register };
    const m = out.register('r', input);
    input.node_name = 'changed';
    expect(m.payload.node_name).toBe('rig');
  });

  it('heartbeat', () => {
    const hb = { node_id: 'n', timestamp: 1718000000, models: ['m'], model_health: { m: 'healthy' as const }, metrics: { gpu_utilization: 0.45, vram_used_gb: 7.2 } };
    expect(out.heartbeat(hb)).toEqual({ type: 'heartbeat', payload: hb });
  });

  it('model_health_update with a unix-seconds timestamp', () => {
    const before = Math.floor(Date.now() / 1000);
    const m = out.modelHealth('n', { m: 'degraded' });
    expect(m.type).toBe('model_health_update');
    expect(m.payload).toEqual({ node_id: 'n', model_health: { m: 'degraded' }, timestamp: expect.any(Number) });
    expect(m.payload.timestamp).toBeGreaterThanOrEqual(before);
    expect(m.payload.timestamp).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
  });

  it('stream_chunk {request_id, chunk, done, seq}, the chunk passed on untouched, and the final null chunk', () => {
    const chunk = { id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: 'Hi' } }] };
    expect(out.streamChunk('r', 3, chunk, false)).toEqual({ type: 'stream_chunk', payload: { request_id: 'r', chunk, done: false, seq: 3 } });
    expect(out.streamChunk('r', 4, chunk, false).payload.chunk).toBe(chunk);
    expect(JSON.parse(encode(out.streamChunk('r', 9, null, true)))).toEqual({ type: 'stream_chunk', payload: { request_id: 'r', chunk: null, done: true, seq: 9 } });
  });

  it('stream_end {request_id, latency_ms, tokens_input, tokens_output, seq}; status_code and error only when set', () => {
    expect(out.streamEnd('r', 10, { latencyMs: 1234, tokensIn: 42, tokensOut: 128 })).toEqual({
      type: 'stream_end',
      payload: { request_id: 'r', latency_ms: 1234, tokens_input: 42, tokens_output: 128, seq: 10 },
    });
    expect(out.streamEnd('r', 5, { latencyMs: 9, tokensIn: 1, tokensOut: 2, statusCode: 502, error: 'engine closed the stream' }).payload).toEqual({
      request_id: 'r',
      latency_ms: 9,
      tokens_input: 1,
      tokens_output: 2,
      seq: 5,
      status_code: 502,
      error: 'engine closed the stream',
    });
    expect(out.streamEnd('r', 1, { latencyMs: 1, tokensIn: 3, tokensOut: 4, estimated: true }).payload.tokens_estimated).toBe(true);
    expect(out.streamEnd('r', 1, { latencyMs: 1, tokensIn: 3, tokensOut: 4, estimated: false }).payload).not.toHaveProperty('tokens_estimated');
  });

  it('a non-stream result is an ack {request_id, response, status_code, latency_ms}', () => {
    const response = { id: 'cmpl', choices: [{ message: { role: 'assistant', content: 'Hello' } }], usage: { prompt_tokens: 3, completion_tokens: 1 } };
    expect(out.inferenceResult('r', { response, statusCode: 200, latencyMs: 77 })).toEqual({
      type: 'ack',
      request_id: 'r',
      payload: { request_id: 'r', response, status_code: 200, latency_ms: 77 },
    });
    expect(out.inferenceResult('r', { response: null, statusCode: 500, latencyMs: 1, error: 'boom' }).payload).toMatchObject({ status_code: 500, error: 'boom' });
  });

  it('warmup ack {request_id, model_id, success, load_time_ms, memory_mb}', () => {
    expect(out.warmupResult('w', { modelId: 'm', success: true, loadTimeMs: 1500, memoryMb: 6000 })).toEqual({
      type: 'ack',
      request_id: 'w',
      payload: { request_id: 'w', model_id: 'm', success: true, load_time_ms: 1500, memory_mb: 6000 },
    });
    // Seed 000's warmup has no request id: the ack then has none either.
    expect(out.warmupResult(undefined, { modelId: 'm', success: false, loadTimeMs: 0, memoryMb: 0, error: 'unknown model' })).toEqual({
      type: 'ack',
      payload: { model_id: 'm', success: false, load_time_ms: 0, memory_mb: 0, error: 'unknown model' },
    });
  });

  it('error {request_id, code, message}, with or without a request id', () => {
    expect(out.error('r', 400, 'bad')).toEqual({ type: 'error', request_id: 'r', payload: { request_id: 'r', code: 400, message: 'bad' } });
    expect(out.error(undefined, 400, 'bad')).toEqual({ type: 'error', payload: { code: 400, message: 'bad' } });
  });

  it('what we send, the hub side can parse back', () => {
    expect(parseInbound(encode(out.error('r', 404, 'no such model')))).toEqual({ type: 'error', requestId: 'r', payload: { request_id: 'r', code: 404, message: 'no such model' } });
    expect(parseInbound(encode(out.warmupResult('w', { modelId: 'm', success: true, loadTimeMs: 1, memoryMb: 2 })))).toMatchObject({ type: 'ack', requestId: 'w' });
  });

  it('the message size limit is 1 MB', () => {
    expect(MAX_MESSAGE_BYTES).toBe(1024 * 1024);
  });
});

describe('hostile nesting', () => {
  it('refuses an inference request nested deeper than 64 levels with a 400-style error naming the request', async () => {
    const { parseInbound, InboundError, jsonDepth } = await import('../../../src/core/protocol/messages');
    // Built as text: JSON.stringify itself would overflow the stack on such a value.
    const deep = `${'['.repeat(20_000)}"x"${']'.repeat(20_000)}`;
    const frame = `{"type":"inference","request_id":"deep-1","payload":{"model_id":"m","request":{"messages":[${deep}]}}}`;
    let err: unknown;
    try {
      parseInbound(frame);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InboundError);
    expect((err as InstanceType<typeof InboundError>).requestId).toBe('deep-1');
    expect((err as Error).message).toMatch(/deeper than 64/);
    expect(jsonDepth({ a: [{ b: 1 }] }, 64)).toBe(3);
    expect(parseInbound(JSON.stringify({ type: 'inference', request_id: 'ok-1', payload: { model_id: 'm', request: { messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] } } })).type).toBe('inference');
  });
});
