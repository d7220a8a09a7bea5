// ModelRegistry.rebuild: models.json entries (on by default or as config's Models says), discovered
// models (off until the owner enables them), the owner's prefs, no double announcement of a model
// mapped through local_model, best-endpoint health, health targets with keys, and the console view.
import { describe, expect, it } from 'vitest';
import type { EngineInfo } from '../../../src/shared/types';
import type { ModelEntry } from '../../../src/core/config/config';
import { ModelRegistry, type ModelPrefs } from '../../../src/core/models/registry';
import { endpointKey, normalizeBaseUrl } from '../../../src/core/engine-client/url';

const engine = (url: string, models: string[], o: Partial<EngineInfo> = {}): EngineInfo => ({
  url,
  type: 'vllm',
  models,
  reachable: true,
  origin: 'probe',
  ...o,
});

function build(o: {
  entries?: Record<string, ModelEntry>;
  configModels?: string[];
  engines?: EngineInfo[];
  prefs?: Record<string, ModelPrefs>;
}): ModelRegistry {
  const r = new ModelRegistry();
  r.rebuild({ entries: o.entries ?? {}, configModels: o.configModels ?? [], engines: o.engines ?? [], prefs: o.prefs ?? {} });
  return r;
}

const zeroCounts = (): { inFlight: number; queued: number; endpointInFlight: (url: string) => number; maxConcurrent: number; maxQueue: number } => ({
  inFlight: 0,
  queued: 0,
  endpointInFlight: () => 0,
  maxConcurrent: 4,
  maxQueue: 32,
});

describe('endpoint keys', () => {
  it('drop trailing slashes and /v1', () => {
    expect(endpointKey(' http://127.0.0.1:8000/v1/ ')).toBe('http://127.0.0.1:8000');
    expect(endpointKey('http://h:1//')).toBe('http://h:1');
    expect(endpointKey('http://h:1/api')).toBe('http://h:1/api');
  });

  it('the registry keys an endpoint as health does (one rule: host case, default port)', () => {
    const r = build({ entries: { m: { endpoint: 'http://LocalHost:80/v1/' } } });
    expect(r.get('m')?.endpoints[0]?.url).toBe(normalizeBaseUrl('http://LocalHost:80/v1/'));
    expect(r.get('m')?.endpoints[0]?.url).toBe('http://localhost');
  });

  it('a models.json endpoint that is not a URL stays listed, as written', () => {
    const r = build({ entries: { m: { endpoint: ' localhost:8000 ' } } });
    expect(r.get('m')?.endpoints[0]?.url).toBe('localhost:8000');
  });
});

describe('ModelRegistry.rebuild', () => {
  it('models.json entries are enabled by default and announced, sorted', () => {
    const r = build({ entries: { zeta: { endpoint: 'http://127.0.0.1:8000/v1' }, alpha: { endpoint: 'http://127.0.0.1:8001' } } });
    expect(r.announced()).toEqual(['alpha', 'zeta']);
    expect(r.get('zeta')).toMatchObject({ enabled: true, fromConfig: true, endpoints: [{ url: 'http://127.0.0.1:8000' }] });
  });

  it('config Models limits which models.json entries are on', () => {
    const r = build({ entries: { a: { endpoint: 'http://h:1' }, b: { endpoint: 'http://h:2' } }, configModels: ['b'] });
    expect(r.announced()).toEqual(['b']);
    expect(r.get('a')?.enabled).toBe(false);
  });

  it('carries local_model and api_key onto the endpoint, and max_concurrent from the entry', () => {
    const r = build({ entries: { pub: { endpoint: 'http://h:1/v1', local_model: 'llama3.2:3b', api_key: 'sk-local', max_concurrent: 2 } } });
    expect(r.get('pub')?.endpoints).toEqual([{ url: 'http://h:1', localModel: 'llama3.2:3b', apiKey: 'sk-local' }]);
    expect(r.get('pub')?.maxConcurrent).toBe(2);
    expect(r.endpoint('pub', 'http://h:1')?.localModel).toBe('llama3.2:3b');
    expect(r.endpoint('pub', 'http://other')).toBeUndefined();
  });

  it('discovered models are listed but off until the owner enables them', () => {
    const r = build({ engines: [engine('http://127.0.0.1:11434', ['qwen2.5:7b'], { type: 'ollama' })] });
    expect(r.get('qwen2.5:7b')).toMatchObject({ enabled: false, fromConfig: false, endpoints: [{ url: 'http://127.0.0.1:11434', engineType: 'ollama' }] });
    expect(r.announced()).toEqual([]);
    const on = build({ engines: [engine('http://127.0.0.1:11434', ['qwen2.5:7b'], { type: 'ollama' })], prefs: { 'qwen2.5:7b': { enabled: true } } });
    expect(on.announced()).toEqual(['qwen2.5:7b']);
  });

  it('an engine that stopped answering keeps its last-known models (shown down, still probed); one never reached adds nothing', () => {
    const r = build({
      engines: [engine('http://h:1', ['m'], { reachable: false }), engine('http://h:2', [], { reachable: false })],
      prefs: { m: { enabled: true } },
    });
    expect(r.all().map((m) => m.id)).toEqual(['m']);
    expect(r.healthTargets().map((t) => t.url)).toEqual(['http://h:1']);
  });

  it('syncHealth replaces every endpoint state: one that left the watch list keeps nothing from before', () => {
    const r = build({ entries: { a: { endpoint: 'http://h:1' }, b: { endpoint: 'http://h:2' } } });
    r.setEndpointHealth('http://h:1', 'unhealthy', 'refused', 'down');
    r.syncHealth([{ url: 'http://h:2', health: 'degraded', lastError: 'slow' }]);
    expect(r.endpointHealthOf('http://h:1')).toBe('healthy');
    expect(r.endpointConditionOf('http://h:1')).toBeUndefined();
    expect(r.healthOf('b')).toBe('degraded');
  });

  it('prefs override the defaults both ways, and set limits', () => {
    const r = build({
      entries: { a: { endpoint: 'http://h:1', max_concurrent: 2 }, b: { endpoint: 'http://h:2' } },
      configModels: ['a'],
      prefs: { a: { enabled: false, maxConcurrent: 7, maxQueue: 3 }, b: { enabled: true } },
    });
    expect(r.announced()).toEqual(['b']);
    expect(r.get('a')).toMatchObject({ enabled: false, maxConcurrent: 7, maxQueue: 3 });
  });

  it('a models.json entry mapping a public id onto an engine model is not announced twice', () => {
    const r = build({
      entries: { 'meta-llama/Llama-3.2-3B-Instruct': { endpoint: 'http://127.0.0.1:11434/v1', local_model: 'llama3.2:3b' } },
      engines: [engine('http://127.0.0.1:11434', ['llama3.2:3b', 'mistral:7b'], { type: 'ollama' })],
      prefs: { 'mistral:7b': { enabled: true } },
    });
    expect(r.all().map((m) => m.id)).toEqual(['meta-llama/Llama-3.2-3B-Instruct', 'mistral:7b']);
    expect(r.announced()).toEqual(['meta-llama/Llama-3.2-3B-Instruct', 'mistral:7b']);
    // The config entry learns the engine type from discovery.
    expect(r.get('meta-llama/Llama-3.2-3B-Instruct')?.endpoints[0]?.engineType).toBe('ollama');
  });

  it('a discovered model with the same id on another engine becomes a second endpoint of the config model', () => {
    const r = build({ entries: { m: { endpoint: 'http://h:1' } }, engines: [engine('http://h:1', ['m']), engine('http://h:2/', ['m'], { type: 'sglang' })] });
    expect(r.get('m')?.endpoints.map((e) => [e.url, e.engineType])).toEqual([
      ['http://h:1', 'vllm'],
      ['http://h:2', 'sglang'],
    ]);
    expect(r.get('m')).toMatchObject({ enabled: true, fromConfig: true });
  });

  it('a rebuild replaces the set (a model whose engine vanished is gone)', () => {
    const r = build({ engines: [engine('http://h:1', ['x'])] });
    r.rebuild({ entries: {}, configModels: [], engines: [], prefs: {} });
    expect(r.get('x')).toBeUndefined();
  });
});

describe('health', () => {
  it('a model is as healthy as its best endpoint; unknown endpoints count as healthy', () => {
    const r = build({ entries: { m: { endpoint: 'http://h:1' } }, engines: [engine('http://h:2', ['m'])] });
    expect(r.healthOf('m')).toBe('healthy');
    r.setEndpointHealth('http://h:1', 'unhealthy', 'connection refused');
    expect(r.healthOf('m')).toBe('healthy');
    r.setEndpointHealth('http://h:2', 'degraded');
    expect(r.healthOf('m')).toBe('degraded');
    r.setEndpointHealth('http://h:2', 'unhealthy');
    expect(r.healthOf('m')).toBe('unhealthy');
    r.setEndpointHealth('http://h:1', 'healthy');
    expect(r.healthOf('m')).toBe('healthy');
  });

  it('an unknown model is unhealthy', () => {
    expect(new ModelRegistry().healthOf('nope')).toBe('unhealthy');
  });

  it('healthMap covers announced models only', () => {
    const r = build({ entries: { a: { endpoint: 'http://h:1' }, b: { endpoint: 'http://h:2' } }, prefs: { b: { enabled: false } } });
    r.setEndpointHealth('http://h:1', 'degraded');
    expect(r.healthMap()).toEqual({ a: 'degraded' });
  });

  it('healthTargets: each endpoint of an enabled model once, with the api key it needs and the models the deep check may ask', () => {
    const r = build({
      entries: {
        a: { endpoint: 'http://h:1' },
        b: { endpoint: 'http://h:1/v1', api_key: 'sk-b', local_model: 'b-local' },
        c: { endpoint: 'http://h:2', api_key: 'sk-c', category: 'embedding' },
        off: { endpoint: 'http://h:3' },
      },
      prefs: { off: { enabled: false } },
    });
    expect(r.healthTargets().sort((x, y) => x.url.localeCompare(y.url))).toEqual([
      {
        url: 'http://h:1',
        apiKey: 'sk-b',
        models: [
          { name: 'a', chat: true },
          { name: 'b-local', chat: true },
        ],
      },
      { url: 'http://h:2', apiKey: 'sk-c', models: [{ name: 'c', chat: false }] },
    ]);
  });

  it('healthTargets: a model held off its paused GPU is not asked with a chat (that would load it back); its neighbour is', () => {
    const r = build({ entries: { a: { endpoint: 'http://h:1' }, b: { endpoint: 'http://h:1' } } });
    expect(r.healthTargets((id) => id === 'a')).toEqual([
      {
        url: 'http://h:1',
        models: [
          { name: 'a', chat: false },
          { name: 'b', chat: true },
        ],
      },
    ]);
  });

  it('a deep check that finds the model not served at an endpoint makes the model unhealthy there, not the endpoint', () => {
    const r = build({ entries: { a: { endpoint: 'http://h:1' }, b: { endpoint: 'http://h:1', local_model: 'bee' } } });
    expect(r.setDeepCheck('http://h:1', 'bee', { at: 1, ok: false, code: 'not_served', error: 'not served' })).toBe(true);
    expect(r.healthOf('b')).toBe('unhealthy');
    expect(r.healthOf('a')).toBe('healthy');
    expect(r.setDeepCheck('http://h:1', 'bee', { at: 2, ok: true })).toBe(true);
    expect(r.healthOf('b')).toBe('healthy');
  });
});

describe('view', () => {
  it('shows each model with health, counts, limits and endpoint errors', () => {
    const r = build({
      entries: { a: { endpoint: 'http://h:1', max_concurrent: 2 } },
      engines: [engine('http://h:2', ['a'], { type: 'llamacpp' }), engine('http://h:3', ['found'])],
    });
    r.setEndpointHealth('http://h:1', 'unhealthy', 'HTTP 500 from /v1/models');
    const v = r.view((model) => ({
      inFlight: model === 'a' ? 3 : 0,
      queued: model === 'a' ? 1 : 0,
      endpointInFlight: (url) => (url === 'http://h:2' ? 3 : 0),
      maxConcurrent: 4,
      maxQueue: 32,
    }));
    expect(v).toEqual([
      {
        id: 'a',
        enabled: true,
        health: 'healthy',
        inFlight: 3,
        queued: 1,
        maxConcurrent: 2,
        maxQueue: 32,
        endpoints: [
          {
            url: 'http://h:1',
            engineType: 'unknown',
            health: 'unhealthy',
            inFlight: 0,
            maxConcurrent: 2,
            consecutiveFailures: 0,
            lastError: 'HTTP 500 from /v1/models',
          },
          { url: 'http://h:2', engineType: 'llamacpp', health: 'healthy', inFlight: 3, maxConcurrent: 2, consecutiveFailures: 0 },
        ],
      },
      {
        id: 'found',
        enabled: false,
        health: 'healthy',
        inFlight: 0,
        queued: 0,
        maxConcurrent: 4,
        maxQueue: 32,
        endpoints: [{ url: 'http://h:3', engineType: 'vllm', health: 'healthy', inFlight: 0, maxConcurrent: 4, consecutiveFailures: 0 }],
      },
    ]);
  });

  it('a recovered endpoint loses its last error', () => {
    const r = build({ entries: { a: { endpoint: 'http://h:1' } } });
    r.setEndpointHealth('http://h:1', 'degraded', 'timeout');
    r.setEndpointHealth('http://h:1', 'healthy');
    expect(r.view(zeroCounts)[0]!.endpoints[0]).not.toHaveProperty('lastError');
  });
});
