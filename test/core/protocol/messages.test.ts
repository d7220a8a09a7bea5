// The hub protocol: parseInbound for every inbound type (valid and invalid frames; errors carry the
// request id when the frame had one), and the outbound builders' shapes per seed 000 and DESIGN.md.
import { describe, expect, it } from 'vitest';
import {
  CAPABILITIES,
  encode,
  HUB_DIALECT_VERSION,
  InboundError,
  MAX_MESSAGE_BYTES,
  out,
  parseInbound,
  PROTOCOL_VERSION,
  type RegisterPayload,
} from '../../../src/core/protocol/messages';

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
    const m = parseInbound(
      frame({ type: 'inference', request_id: 'req-1', payload: { endpoint_id: 'ep-9', model_id: 'meta-llama/Llama-3.2-3B-Instruct', stream: true, request } }),
    );
    expect(m).toEqual({
      type: 'inference',
      requestId: 'req-1',
      payload: { endpoint_id: 'ep-9', model_id: 'meta-llama/Llama-3.2-3B-Instruct', stream: true, request },
    });
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
    expect(e).toMatchObject({ code: 'invalid_payload', requestId: 'rid', field });
    // The message names the field too (it is what the hub is told).
    expect(e.message).toContain(`${field}:`);
  });

  it('refuses an inference without any request id (nothing to answer to)', () => {
    const e = refused(frame({ type: 'inference', payload: { model_id: 'm', request: chatRequest } }));
    expect(e.code).toBe('missing_request_id');
    expect(e.requestId).toBeUndefined();
  });
});

describe('parseInbound: other types', () => {
  it('ack, with the hub fields kept', () => {
    const m = parseInbound(
      frame({ type: 'ack', request_id: 'reg-1', payload: { request_id: 'reg-1', success: true, message: 'registered successfully', extra: 1 } }),
    );
    expect(m).toEqual({ type: 'ack', requestId: 'reg-1', payload: { request_id: 'reg-1', success: true, message: 'registered successfully', extra: 1 } });
    expect(parseInbound(frame({ type: 'ack' }))).toEqual({ type: 'ack', requestId: undefined, payload: {} });
  });

  it('ack with a wrong field type is refused with its id', () => {
    const e = refused(frame({ type: 'ack', request_id: 'a1', payload: { success: 'yes' } }));
    expect(e).toMatchObject({ code: 'invalid_payload', requestId: 'a1', field: 'success' });
  });

  it('error, with a numeric or string code; the id may be only in the payload', () => {
    expect(parseInbound(frame({ type: 'error', payload: { request_id: 'r', code: 401, message: 'invalid provider API key' } }))).toEqual({
      type: 'error',
      requestId: 'r',
      payload: { request_id: 'r', code: 401, message: 'invalid provider API key' },
    });
    expect(parseInbound(frame({ type: 'error', payload: { code: 'rate_limited' } }))).toMatchObject({ type: 'error', payload: { code: 'rate_limited' } });
    expect(refused(frame({ type: 'error', request_id: 'e1', payload: { code: true } }))).toMatchObject({
      code: 'invalid_payload',
      requestId: 'e1',
      field: 'code',
    });
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
    expect(e).toMatchObject({ code: 'invalid_payload', requestId: 'w2', field: 'model_id' });
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
    expect(refused(frame({ type: 'cancel', payload: {} })).code).toBe('missing_request_id');
    expect(refused(frame({ type: 'cancel', request_id: 'x', payload: { request_id: '' } }))).toMatchObject({ code: 'invalid_payload', field: 'request_id' });
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
    expect(e).toMatchObject({ code: 'invalid_payload', requestId: 'r', field });
  });

  it('resume without any request id is refused', () => {
    expect(refused(frame({ type: 'resume', payload: { last_seq: 1 } })).code).toBe('missing_request_id');
  });
});

describe('parseInbound: malformed frames', () => {
  it('invalid JSON', () => {
    const e = refused('{"type": "inference", ');
    expect(e.code).toBe('not_json');
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
    expect(refused(text).code).toBe('bad_envelope');
  });

  it('unknown type: parsed as unknown (logged, never answered), naming the type and the request id', () => {
    expect(parseInbound(frame({ type: 'teleport', request_id: 'u1', payload: {} }))).toEqual({ type: 'unknown', messageType: 'teleport', requestId: 'u1' });
    expect(parseInbound(frame({ type: 'teleport', payload: { request_id: 'u2' } }))).toEqual({ type: 'unknown', messageType: 'teleport', requestId: 'u2' });
    expect(parseInbound(frame({ type: 'teleport' }))).toEqual({ type: 'unknown', messageType: 'teleport' });
  });

  it('a Go-typed ack (request_id "", extensions absent) and an ack with extensions', () => {
    expect(parseInbound(frame({ type: 'ack', payload: { request_id: '', success: true, message: 'Registration successful' } }))).toEqual({
      type: 'ack',
      requestId: '',
      payload: { request_id: '', success: true, message: 'Registration successful' },
    });
    expect(parseInbound(frame({ type: 'ack', request_id: 'r', payload: { request_id: 'r', success: true, extensions: ['resume-v1'] } }))).toMatchObject({
      payload: { extensions: ['resume-v1'] },
    });
    expect(refused(frame({ type: 'ack', request_id: 'r', payload: { success: true, extensions: 'resume-v1' } }))).toMatchObject({
      code: 'invalid_payload',
      field: 'extensions',
    });
  });

  it('an invalid inference says whether it asked to stream (so it is refused on that result path)', () => {
    expect(refused(frame({ type: 'inference', request_id: 's', payload: { model_id: 'm', stream: true, request: {} } })).stream).toBe(true);
    expect(refused(frame({ type: 'inference', request_id: 's', payload: { model_id: 'm', request: { stream: true } } })).stream).toBe(true);
    expect(refused(frame({ type: 'inference', request_id: 'n', payload: { model_id: 'm', request: {} } })).stream).toBe(false);
  });

  it('cancel keeps the reason', () => {
    expect(parseInbound(frame({ type: 'cancel', payload: { request_id: 'c', reason: 'attempt_timeout' } }))).toEqual({
      type: 'cancel',
      requestId: 'c',
      reason: 'attempt_timeout',
    });
  });
});

describe("outbound builders (the Go provider's shapes, HUB-PROTOCOL.md)", () => {
  const nodeId = `04${'a'.repeat(128)}`;
  const register: RegisterPayload = {
    node_id: nodeId,
    provider_id: nodeId,
    worker_addr: nodeId,
    owner_addr: '',
    node_name: 'rig',
    token: 'sk-prov-x',
    models: ['m1'],
    model_hashes: [{ model_id: 'm1', format: 'gguf', quantization: 'q4_k_m', context_length: 16384, context_source: 'detected' }],
    model_declarations: [
      {
        schema_version: '1',
        model_id: 'm1',
        context_source: 'detected',
        quantization: 'int4',
        engine: 'llama.cpp',
        input_modalities: [{ type: 'text', max_context_length: { value: 16384, unit: 'token' } }],
        output_modalities: [{ type: 'text', streaming: true, supported_parameters: ['max_tokens'] }],
        capacity: [{ type: 'concurrency', unit: 'request', value: 2 }],
      },
    ],
    capabilities: [...CAPABILITIES],
    protocol_version: PROTOCOL_VERSION,
    cp_version: HUB_DIALECT_VERSION,
    client: 'swan-provider-console',
    client_version: '0.1.0',
    hardware: {
      gpu_type: 'RTX 3080',
      gpu_model: 'NVIDIA GeForce RTX 3080',
      vram_gb: 10,
      gpu_count: 1,
      serving_engine: 'sglang',
      compute_capability: '8.6',
      driver_version: '550',
      cuda_version: '12.4',
    },
  };

  it('register carries the Go fields (worker_addr, owner_addr, capabilities inference+verification first) and cp_version', () => {
    const m = JSON.parse(encode(out.register('reg-uuid', register))) as { type: string; request_id: string; payload: Record<string, unknown> };
    expect(m.type).toBe('register');
    expect(m.request_id).toBe('reg-uuid');
    expect(Object.keys(m.payload).sort()).toEqual(
      [
        'capabilities',
        'client',
        'client_version',
        'cp_version',
        'hardware',
        'model_declarations',
        'model_hashes',
        'models',
        'node_id',
        'node_name',
        'owner_addr',
        'protocol_version',
        'provider_id',
        'token',
        'worker_addr',
      ].sort(),
    );
    expect(m.payload).toEqual(register);
    expect((m.payload.capabilities as string[]).slice(0, 2)).toEqual(['inference', 'verification']);
    expect(m.payload.capabilities).toContain('resume-v1');
  });

  it('register copies its payload (a later change to the input does not leak into the message)', () => {
    const input = { ...register };
    const m = out.register('r', input);
    input.node_name = 'changed';
    expect(m.payload.node_name).toBe('rig');
  });

  it('heartbeat', () => {
    const hb = {
      node_id: 'n',
      provider_id: 'n',
      timestamp: 1718000000,
      models: ['m'],
      model_health: { m: 'healthy' as const },
      metrics: { gpu_utilization: 0.45, vram_used_gb: 7.2 },
      model_declarations: [],
      model_hashes: [{ model_id: 'm', context_length: 4096, context_source: 'detected' as const }],
    };
    expect(out.heartbeat(hb)).toEqual({ type: 'heartbeat', payload: hb });
  });

  it('model_health_update with a unix-seconds timestamp', () => {
    const before = Math.floor(Date.now() / 1000);
    const m = out.modelHealth('n', { m: 'degraded' });
    expect(m.type).toBe('model_health_update');
    expect(m.payload).toEqual({ node_id: 'n', provider_id: 'n', model_health: { m: 'degraded' }, timestamp: expect.any(Number) });
    expect(m.request_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(m.payload.timestamp).toBeGreaterThanOrEqual(before);
    expect(m.payload.timestamp).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
  });

  it('stream_chunk {request_id, chunk, done, seq}, the chunk passed on untouched, and the final null chunk', () => {
    const chunk = { id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: 'Hi' } }] };
    expect(out.streamChunk('r', 3, chunk, false)).toEqual({ type: 'stream_chunk', request_id: 'r', payload: { request_id: 'r', chunk, done: false, seq: 3 } });
    expect(out.streamChunk('r', 4, chunk, false).payload.chunk).toBe(chunk);
    expect(JSON.parse(encode(out.streamChunk('r', 9, null, true)))).toEqual({
      type: 'stream_chunk',
      request_id: 'r',
      payload: { request_id: 'r', chunk: null, done: true, seq: 9 },
    });
    expect(out.streamErrorChunk('r', 1, 'engine said 400')).toEqual({
      type: 'stream_chunk',
      request_id: 'r',
      payload: { request_id: 'r', chunk: null, done: true, error: 'engine said 400', seq: 1 },
    });
  });

  it('stream_end {request_id, latency_ms, tokens_input, tokens_output, seq}; status_code and error only when set', () => {
    expect(out.streamEnd('r', 10, { latencyMs: 1234, tokensIn: 42, tokensOut: 128 })).toEqual({
      type: 'stream_end',
      request_id: 'r',
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
    // Unknown (estimated) counts are left out, never sent as numbers.
    expect(out.streamEnd('r', 1, { latencyMs: 1 }).payload).toEqual({ request_id: 'r', latency_ms: 1, seq: 1 });
  });

  it('a non-stream result is an ack {request_id, response, status_code, latency_ms}', () => {
    const response = { id: 'cmpl', choices: [{ message: { role: 'assistant', content: 'Hello' } }], usage: { prompt_tokens: 3, completion_tokens: 1 } };
    expect(out.inferenceResult('r', { response, statusCode: 200, latencyMs: 77 })).toEqual({
      type: 'ack',
      request_id: 'r',
      payload: { request_id: 'r', response, status_code: 200, latency_ms: 77 },
    });
    expect(out.inferenceResult('r', { response: null, statusCode: 500, latencyMs: 1, error: 'boom' }).payload).toMatchObject({
      status_code: 500,
      error: 'boom',
    });
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

  it('refusals on the result paths: error chunk + stream_end for a stream, ack with response null otherwise', () => {
    expect(out.refusal('r', true, 429, 'queue full').map((m) => [m.type, m.request_id, m.payload])).toEqual([
      ['stream_chunk', 'r', { request_id: 'r', chunk: null, done: true, error: 'queue full', seq: 1 }],
      ['stream_end', 'r', { request_id: 'r', latency_ms: 0, seq: 2, status_code: 429, error: 'queue full' }],
    ]);
    expect(out.refusal('r', false, 404, 'no such model')).toEqual([
      { type: 'ack', request_id: 'r', payload: { request_id: 'r', response: null, status_code: 404, latency_ms: 0, error: 'no such model', seq: 1 } },
    ]);
  });

  it('error {request_id, code, message}, with or without a request id', () => {
    expect(out.error('r', 400, 'bad')).toEqual({ type: 'error', request_id: 'r', payload: { request_id: 'r', code: 400, message: 'bad' } });
    expect(out.error(undefined, 400, 'bad')).toEqual({ type: 'error', payload: { code: 400, message: 'bad' } });
  });

  it('what we send, the hub side can parse back', () => {
    expect(parseInbound(encode(out.error('r', 404, 'no such model')))).toEqual({
      type: 'error',
      requestId: 'r',
      payload: { request_id: 'r', code: 404, message: 'no such model' },
    });
    expect(parseInbound(encode(out.warmupResult('w', { modelId: 'm', success: true, loadTimeMs: 1, memoryMb: 2 })))).toMatchObject({
      type: 'ack',
      requestId: 'w',
    });
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
    expect(err).toMatchObject({ code: 'too_deep', requestId: 'deep-1' });
    expect(jsonDepth({ a: [{ b: 1 }] }, 64)).toBe(3);
    expect(
      parseInbound(
        JSON.stringify({
          type: 'inference',
          request_id: 'ok-1',
          payload: { model_id: 'm', request: { messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] } },
        }),
      ).type,
    ).toBe('inference');
  });
});
