// Detection of each engine type, discovery of several engines at once, a port held by something that
// is not an engine, an engine vanishing and returning, and the merged catalogue.
import http from 'node:http';
import net from 'node:net';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import type { EngineInfo, EngineType } from '../../../src/shared/types';
import { DEFAULT_PORTS, defaultProbeUrls, detectEngine } from '../../../src/core/engine-client/detect';
import { buildCatalog, EngineDiscovery } from '../../../src/core/engine-client/discovery';
import { startTestEngine, type TestEngine } from '../../support/engine-server';

let engines: TestEngine[] = [];
let servers: net.Server[] = [];
let discoveries: EngineDiscovery[] = [];
afterEach(async () => {
  discoveries.forEach((d) => d.stop());
  await Promise.all(engines.map((e) => e.close()));
  for (const s of servers) {
    if (s instanceof http.Server) s.closeAllConnections();
  }
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  engines = [];
  servers = [];
  discoveries = [];
});

async function engine(engineType: EngineType, opts: Parameters<typeof startTestEngine>[0] = {}): Promise<TestEngine> {
  const e = await startTestEngine({ engineType, ...opts });
  engines.push(e);
  return e;
}

async function listen(s: net.Server): Promise<string> {
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(s.address() as net.AddressInfo).port}`;
}

/** The engine at `target` behind a delay we set: every request waits that long first. */
async function delayed(target: string, initialMs = 0): Promise<{ url: string; setDelay: (ms: number) => void }> {
  let delay = initialMs;
  const url = await listen(
    http.createServer((req, res) => {
      setTimeout(() => {
        const up = http.request(`${target}${req.url ?? '/'}`, { method: req.method, headers: req.headers }, (r) => {
          res.writeHead(r.statusCode ?? 502, r.headers);
          r.pipe(res);
        });
        up.on('error', () => res.destroy());
        req.pipe(up);
      }, delay);
    }),
  );
  return { url, setDelay: (ms) => (delay = ms) };
}

/** A web app holding a port: HTML 200 on every path. */
const webApp = () => listen(http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>my app</html>')));
/** Something that is not HTTP at all (a database on the port). */
const rawTcp = () => listen(net.createServer((s) => s.resume().end('-ERR unknown command\r\n')));

describe('detectEngine', () => {
  const cases: Array<[EngineType, string | undefined, string[]]> = [
    ['vllm', '0.11.0', ['Qwen2.5-1.5B-Instruct']],
    ['sglang', '0.5.12', ['Qwen/Qwen3-0.6B']],
    ['ollama', '0.12.6', ['gemma3:4b']],
    ['llamacpp', 'b6351-5d804a49', ['Qwen2.5-1.5B-Instruct-Q4_K_M.gguf']],
    ['lmstudio', undefined, ['text-embedding-nomic-embed-text-v1.5']],
    ['tgi', '3.1.2-dev0', ['meta-llama/Llama-3.1-8B-Instruct']],
    ['openai', undefined, ['gpt-4o', 'gpt-5-nano', 'babbage-002']],
  ];
  for (const [type, version, models] of cases) {
    it(`detects ${type} with its version and models`, async () => {
      const e = await engine(type);
      const info = await detectEngine(`${e.url}/v1`, 1000);
      expect(info).toMatchObject({ url: e.url, type, models, reachable: true, origin: 'probe' });
      expect(info?.version).toBe(version);
    });
  }

  it('adds Ollama /api/tags models to /v1/models', async () => {
    const e = await engine('ollama', { models: ['llama3.1:8b', 'qwen3:4b'] });
    const info = await detectEngine(e.url, 1000);
    expect(info?.models.sort()).toEqual(['llama3.1:8b', 'qwen3:4b']);
  });

  it('nothing listening -> null; a web app or a non-HTTP service -> not an engine, with a clear error', async () => {
    const e = await engine('vllm');
    await e.setMode('down');
    expect(await detectEngine(e.url, 500)).toBeNull();
    const web = await webApp();
    expect(await detectEngine(web, 500)).toMatchObject({
      type: 'unknown',
      reachable: false,
      error: `something answers at ${web} but it is not an inference engine (GET /v1/models answered 200)`,
    });
    const tcp = await rawTcp();
    const r = await detectEngine(tcp, 500);
    expect(r).toMatchObject({ type: 'unknown', reachable: false });
    expect(r?.error).toContain('not an inference engine');
  });

  it('default ports follow DESIGN.md', () => {
    expect(DEFAULT_PORTS).toMatchObject({ vllm: [8000], sglang: [30000], ollama: [11434], llamacpp: [8080], lmstudio: [1234], jan: [1337], tgi: [8080, 3000] });
    expect(defaultProbeUrls('127.0.0.1', {})).toEqual([1234, 1337, 3000, 8000, 8080, 11434, 30000].map((p) => `http://127.0.0.1:${p}`));
  });

  it('SWAN_DISCOVERY_URLS replaces the default ports: loopback addresses only, empty for none', () => {
    expect(defaultProbeUrls('127.0.0.1', { SWAN_DISCOVERY_URLS: '' })).toEqual([]);
    expect(
      defaultProbeUrls('127.0.0.1', {
        SWAN_DISCOVERY_URLS: 'http://127.0.0.1:9001, http://localhost:9002/v1,http://192.168.1.5:8080,http://169.254.169.254,file:///x,http://u:p@127.0.0.1:1',
      }),
    ).toEqual(['http://127.0.0.1:9001', 'http://localhost:9002/v1']);
  });
});

describe('EngineDiscovery', () => {
  it('finds several engines at once without blocking, skipping a non-engine port', async () => {
    const [v, o, l] = await Promise.all([engine('vllm'), engine('ollama'), engine('llamacpp')]);
    const web = await webApp();
    const d = new EngineDiscovery({ probeUrls: [v.url, o.url, l.url, web], intervalMs: 0, timeoutMs: 500 });
    discoveries.push(d);
    const changed = once(d, 'change');
    d.start(); // returns at once
    expect(d.engines()).toEqual([]);
    const [list] = (await changed) as [EngineInfo[]];
    expect(list.map((e) => [e.url, e.type, e.reachable]).sort()).toEqual(
      [
        [v.url, 'vllm', true],
        [o.url, 'ollama', true],
        [l.url, 'llamacpp', true],
      ].sort(),
    );
  });

  it('an owner-added host that is not an engine is listed with the reason', async () => {
    const web = await webApp();
    const v = await engine('vllm');
    const d = new EngineDiscovery({ probeUrls: [], hosts: [`${v.url}/v1/`, web], intervalMs: 0 });
    discoveries.push(d);
    const list = await d.rescan();
    expect(list).toHaveLength(2);
    expect(list[0]).toMatchObject({ url: v.url, type: 'vllm', origin: 'owner', reachable: true });
    expect(list[1]).toMatchObject({ url: web, reachable: false, origin: 'owner' });
    expect(list[1]?.error).toContain('not an inference engine');
  });

  it('an engine that vanishes is kept as unreachable, then returns; changes are announced', async () => {
    const v = await engine('vllm');
    const s = await engine('sglang');
    const d = new EngineDiscovery({ probeUrls: [v.url, s.url], intervalMs: 0, timeoutMs: 500 });
    discoveries.push(d);
    const events: EngineInfo[][] = [];
    d.on('change', (l: EngineInfo[]) => events.push(l));
    await d.rescan();
    await d.rescan();
    expect(events).toHaveLength(1);

    await s.setMode('down');
    const gone = await d.rescan();
    expect(gone.find((e) => e.url === s.url)).toMatchObject({ reachable: false, error: `the engine at ${s.url} stopped answering` });
    expect(events).toHaveLength(2);

    await s.setMode('ok');
    const back = await d.rescan();
    expect(back.find((e) => e.url === s.url)).toMatchObject({ reachable: true, type: 'sglang' });
    expect(events).toHaveLength(3);
  });

  it('an engine that answered before and is slow for a moment is not called gone; a first probe that slow finds nothing', async () => {
    const v = await engine('vllm');
    const { url: slow, setDelay } = await delayed(v.url);
    const d = new EngineDiscovery({ probeUrls: [slow], intervalMs: 0, timeoutMs: 100 });
    discoveries.push(d);
    // Its first answer (a 100 ms first probe can miss on a loaded machine: asked until it answers once).
    let first: EngineInfo | undefined;
    for (let i = 0; i < 50 && !first?.reachable; i++) first = (await d.rescan()).find((e) => e.url === slow);
    expect(first).toMatchObject({ reachable: true, type: 'vllm' });
    setDelay(400);
    expect((await d.rescan()).find((e) => e.url === slow)).toMatchObject({ reachable: true, type: 'vllm' });
    // A new discovery has never seen it: 400 ms is past its 100 ms first probe.
    const fresh = new EngineDiscovery({ probeUrls: [slow], intervalMs: 0, timeoutMs: 100 });
    discoveries.push(fresh);
    expect((await fresh.rescan()).find((e) => e.url === slow)).toBeUndefined();
    // One the owner named is given the longer wait from its first probe (a busy machine's engine is not "unknown").
    const named = new EngineDiscovery({ probeUrls: [], hosts: [slow], intervalMs: 0, timeoutMs: 100 });
    discoveries.push(named);
    expect((await named.rescan()).find((e) => e.url === slow)).toMatchObject({ reachable: true, type: 'vllm', origin: 'owner' });
  });

  it('an engine the owner named that did not answer at start is looked at again within seconds, not at the next scan', async () => {
    const v = await engine('vllm');
    await v.setMode('down');
    // The scan interval is a minute: only the soon-retry can find it within this test's time.
    const d = new EngineDiscovery({ probeUrls: [], hosts: [v.url], intervalMs: 60_000, timeoutMs: 100, loadingRetryMs: 50 });
    discoveries.push(d);
    const found = new Promise<void>((resolve) => d.on('change', (l: EngineInfo[]) => l.some((e) => e.url === v.url && e.reachable) && resolve()));
    d.start();
    await d.firstScan;
    expect(d.engines().find((e) => e.url === v.url)).toMatchObject({ reachable: false, origin: 'owner' });
    await v.setMode('ok');
    await found;
  });

  it('a vanished engine is dropped after keepMissingMs', async () => {
    const v = await engine('vllm');
    const d = new EngineDiscovery({ probeUrls: [v.url], intervalMs: 0, keepMissingMs: 0 });
    discoveries.push(d);
    expect(await d.rescan()).toHaveLength(1);
    await v.setMode('down');
    expect(await d.rescan()).toEqual([]);
  });

  it('re-runs on its timer and picks up new models', async () => {
    const v = await engine('vllm', { models: ['a'] });
    const d = new EngineDiscovery({ probeUrls: [v.url], intervalMs: 40 });
    discoveries.push(d);
    d.start();
    await once(d, 'change');
    v.opts.models = ['a', 'b'];
    const [list] = (await once(d, 'change')) as [EngineInfo[]];
    expect(list[0]?.models).toEqual(['a', 'b']);
  });
});

describe('buildCatalog', () => {
  const engines: EngineInfo[] = [
    { url: 'http://127.0.0.1:8000', type: 'vllm', models: ['Qwen2.5-1.5B-Instruct', 'other'], reachable: true, origin: 'probe' },
    { url: 'http://127.0.0.1:11434', type: 'ollama', models: ['qwen-1.5b'], reachable: true, origin: 'probe' },
    { url: 'http://127.0.0.1:30000', type: 'sglang', models: ['gone'], reachable: false, origin: 'probe' },
  ];

  it('merges models.json with discovery; one model on several endpoints', () => {
    const warnings: string[] = [];
    const cat = buildCatalog(
      engines,
      {
        'qwen-1.5b': { endpoint: 'http://127.0.0.1:8000/v1', local_model: 'Qwen2.5-1.5B-Instruct', api_key: 'k' },
        remote: { endpoint: 'http://10.0.0.5:8000/' },
        broken: { endpoint: 'not a url' },
      },
      (w) => warnings.push(w),
    );
    expect(cat.get('qwen-1.5b')).toEqual([
      { url: 'http://127.0.0.1:8000', localModel: 'Qwen2.5-1.5B-Instruct', apiKey: 'k', engineType: 'vllm' },
      { url: 'http://127.0.0.1:11434', engineType: 'ollama' },
    ]);
    // The engine's own name for a model that models.json already maps is not announced twice.
    expect(cat.has('Qwen2.5-1.5B-Instruct')).toBe(false);
    expect(cat.get('other')).toEqual([{ url: 'http://127.0.0.1:8000', engineType: 'vllm' }]);
    expect(cat.get('remote')).toEqual([{ url: 'http://10.0.0.5:8000' }]);
    expect(cat.has('gone')).toBe(false);
    expect(cat.has('broken')).toBe(false);
    expect(warnings).toEqual([expect.stringContaining('models.json: model "broken" has an unusable endpoint "not a url"')]);
  });
});
