// The small decisions the gateway makes before any request: subprotocol negotiation, which browser
// origins and hosts may connect, what counts as loopback, and the seed 003 fleet snapshot.
import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { isLoopbackAddress, isLoopbackHost } from '../../../src/core/http/loopback';
import { describeFleet } from '../../../src/core/gateway/describe-fleet';
import { parseListen, resolveOptions } from '../../../src/core/gateway/options';
import { OriginPolicy } from '../../../src/core/gateway/origin';
import { negotiate } from '../../../src/core/gateway/stream-v1-messages';

const req = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;

describe('negotiate', () => {
  it('picks stream-v1, carries access_token alone, refuses unknown versions and protocols with a reason', () => {
    expect(negotiate(['stream-v1'])).toEqual({ protocol: 'stream-v1' });
    expect(negotiate(['stream-v3', 'stream-v1', 'access_token', 'sk-x'])).toEqual({ protocol: 'stream-v1' });
    expect(negotiate(['access_token', 'sk-x'])).toEqual({ protocol: 'access_token' });
    expect(negotiate([])).toEqual({});
    expect(negotiate(['stream-v2'])).toMatchObject({ code: 'unsupported_version' });
    // The refusal says what to offer instead.
    expect(negotiate(['stream-v2']).refuse).toContain('Connect with Sec-WebSocket-Protocol: stream-v1');
    expect(negotiate(['graphql-ws'])).toMatchObject({ code: 'unknown_subprotocol' });
  });
});

describe('OriginPolicy', () => {
  it('lets programs without Origin in, allowed browser origins in, and nothing else', () => {
    const p = new OriginPolicy(['http://localhost:5173/', 'null'], '127.0.0.1');
    expect(p.check(req({ host: '127.0.0.1:18080' }))).toBeUndefined();
    expect(p.check(req({ host: 'localhost:18080', origin: 'http://localhost:5173' }))).toBeUndefined();
    expect(p.check(req({ host: 'localhost:18080', origin: 'null' }))).toBeUndefined();
    expect(p.check(req({ host: 'localhost:18080', origin: 'http://localhost:5174' }))).toMatchObject({ code: 'origin_not_allowed' });
    // The owner is told where to allow it.
    expect(p.check(req({ host: 'localhost:18080', origin: 'http://localhost:5174' }))?.message).toContain('AllowedOrigins');
    expect(p.check(req({ host: 'localhost:18080', origin: 'https://localhost:5173' }))).toMatchObject({ code: 'origin_not_allowed' });
  });

  it('on loopback, refuses a Host that is not this machine (DNS rebinding); on a LAN bind any Host is fine', () => {
    expect(new OriginPolicy([], '127.0.0.1').check(req({ host: 'evil.example:18080' }))).toMatchObject({ code: 'host_not_local' });
    expect(new OriginPolicy([], '127.0.0.1').check(req({ host: '[::1]:18080' }))).toBeUndefined();
    expect(new OriginPolicy([], '192.168.1.20').check(req({ host: 'gpu-box.lan:18080' }))).toBeUndefined();
  });
});

describe('loopback', () => {
  it('knows loopback addresses and hosts', () => {
    for (const a of ['127.0.0.1', '127.8.9.10', '::1', '::ffff:127.0.0.1']) expect(isLoopbackAddress(a)).toBe(true);
    for (const a of ['192.168.1.2', '::ffff:10.0.0.1', '0.0.0.0', undefined]) expect(isLoopbackAddress(a)).toBe(false);
    expect(isLoopbackHost('localhost')).toBe(true);
    expect(isLoopbackHost('[::1]')).toBe(true);
    expect(isLoopbackHost('0.0.0.0')).toBe(false);
  });
});

describe('options', () => {
  it('defaults to the seed values and names a bad option', () => {
    const o = resolveOptions({} as Parameters<typeof resolveOptions>[0]);
    expect(o).toMatchObject({
      host: '127.0.0.1',
      port: 18080,
      websocketAuth: true,
      window: { bytes: 65536, messages: 32 },
      resumeTtlMs: 300_000,
      maxMessageBytes: 1048576,
      idleTimeoutMs: 300_000,
    });
    expect(o.limits).toEqual({ ratePerMinute: 60, burst: 10, maxConcurrent: 4 });
    expect(() => resolveOptions({ window: { messages: 0 } } as Parameters<typeof resolveOptions>[0])).toThrow(
      expect.objectContaining({ code: 'invalid_option', field: 'window.messages' }),
    );
  });

  it('reads [Gateway] Listen', () => {
    expect(parseListen('127.0.0.1:18080')).toEqual({ host: '127.0.0.1', port: 18080 });
    expect(parseListen('0.0.0.0:8080')).toEqual({ host: '0.0.0.0', port: 8080 });
    expect(() => parseListen('18080')).toThrow(expect.objectContaining({ code: 'listen_format' }));
    expect(() => parseListen('host:99999')).toThrow(expect.objectContaining({ code: 'listen_format' }));
  });
});

describe('describeFleet', () => {
  it('lists engines as executors (local ones with this machine GPUs) and enabled models on them', () => {
    const gpu = { index: 0, vendor: 'nvidia', model: 'RTX 3080', slug: 'rtx3080', vramTotalMb: 10240, sharedMemory: false, source: 'nvidia-smi' } as const;
    const f = describeFleet({
      hostname: 'rig',
      gpus: [gpu, { ...gpu, index: 1 }],
      models: [
        {
          id: 'llama',
          endpoints: [
            { url: 'http://127.0.0.1:8000', engineType: 'vllm' },
            { url: 'http://10.0.0.5:8000', engineType: 'vllm' },
          ],
        },
        { id: 'qwen', endpoints: [{ url: 'http://127.0.0.1:8000', engineType: 'vllm' }] },
      ],
      activeRequests: 3,
    });
    expect(f).toEqual({
      hostname: 'rig',
      executors: [
        { name: 'vllm@127.0.0.1:8000', vendor: 'nvidia', device_count: 2 },
        { name: 'vllm@10.0.0.5:8000', vendor: 'remote', device_count: 0 },
      ],
      loaded_models: [
        { name: 'llama', revision: null, assigned_executor: 'vllm@127.0.0.1:8000' },
        { name: 'llama', revision: null, assigned_executor: 'vllm@10.0.0.5:8000' },
        { name: 'qwen', revision: null, assigned_executor: 'vllm@127.0.0.1:8000' },
      ],
      active_requests: 3,
    });
  });
});
