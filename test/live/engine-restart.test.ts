// A real llama-server added in the console (not in models.json, not on a default port) is killed and
// started again: the model stays in the table as down while it is gone, and serves again (the hub answers
// 200) within one health interval of the engine answering, with no agent restart, Rescan or Serve toggle.
import fs from 'node:fs';
import path from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentSnapshot } from '../../src/shared/views/snapshot';
import { freePort, tempHome } from '../support/stack';
import { Bridge, Cli, eventually, get, Llama, LLAMA_PRESENT } from '../support/live/llama';
import { writeConfigToml } from '../support/config-toml';

const KEY = 'sk-prov-live-1234567890';
const SKIP = 'skipped: ../shared/engines/llama.cpp is absent (this suite runs the real llama-server)';
const HEALTH_INTERVAL_S = 5;

describe.skipIf(!LLAMA_PRESENT)(LLAMA_PRESENT ? 'live: an engine added in the console comes back' : `live: engine restart — ${SKIP}`, () => {
  const cleanup: Array<() => unknown> = [];
  let llama: Llama;
  let hubUrl: string;
  let bridge: Bridge;

  const snapshot = () => bridge.invoke<AgentSnapshot>('snapshot.get');
  const hubHealth = async (model: string) => {
    const ps = JSON.parse((await get(`${hubUrl}/dev/providers`)).body) as Array<{ connected: boolean; health: Record<string, string>; models: string[] }>;
    const p = ps.find((x) => x.connected);
    return p?.models.includes(model) ? p.health[model] : undefined;
  };
  const ask = () =>
    new OpenAI({ baseURL: `${hubUrl}/v1`, apiKey: 'any', maxRetries: 0 }).chat.completions.create({
      model: 'tiny',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 2,
    });

  beforeAll(async () => {
    const [pl, ph] = [await freePort(), await freePort()];
    llama = new Llama(pl, ['-np', '1']);
    cleanup.push(() => llama.kill());
    await llama.start();
    const hub = new Cli(['dev-hub', '--port', String(ph), '--token', KEY]);
    cleanup.push(() => hub.stop());
    hubUrl = `http://127.0.0.1:${ph}`;
    const home = tempHome('swan-live-restart-');
    cleanup.push(() => fs.rmSync(home, { recursive: true, force: true }));
    fs.writeFileSync(path.join(home, 'models.json'), '{}');
    writeConfigToml(home, {
      API: { NodeName: 'live-restart' },
      Inference: { WebSocketURL: `ws://127.0.0.1:${ph}`, ServiceURL: hubUrl, ApiKey: KEY },
      Agent: { HealthCheckIntervalSeconds: HEALTH_INTERVAL_S, HeartbeatIntervalSeconds: 2 },
    });
    await hub.waitFor(/dev hub listening/, 'dev hub up');
    const agent = new Cli(['run', '--home', home, '--config', path.join(home, 'config.toml'), '--console', '127.0.0.1:0', '--no-discovery']);
    cleanup.push(() => agent.stop());
    bridge = await Bridge.open((await agent.waitFor(/console: (http:\/\/\S+)/, 'console URL'))[1]!);
    cleanup.push(() => bridge.close());
  }, 60_000);

  afterAll(async () => {
    for (const c of cleanup.reverse()) await c();
  }, 30_000);

  it('killed, gone at a rescan, restarted: down with the reason meanwhile, then the hub answers 200 within one health interval', async () => {
    await bridge.invoke('engines.addEndpoint', { url: llama.url, model: 'tiny' });
    await eventually(async () => (await hubHealth('tiny')) === 'healthy', 'tiny announced and healthy at the hub', 20_000);
    expect((await ask()).usage?.completion_tokens).toBe(2);
    // A random-weight file named "tiny" (147,392 parameters, as llama-server reports) is no catalogue model:
    // nothing is offered on a likeness of names.
    const first = await eventually(async () => {
      const s = await snapshot();
      return s.catalogue?.state === 'ok' ? s : undefined;
    }, 'the catalogue read');
    expect(first.engines.find((e) => e.url === llama.url)?.modelMeta?.[first.engines.find((e) => e.url === llama.url)!.models[0]!]).toMatchObject({
      parameters: 147_392,
    });
    expect(first.catalogue?.models.tiny).toMatchObject({ known: false, suggestions: [] });

    await llama.kill();
    await eventually(async () => (await hubHealth('tiny')) === 'unhealthy', 'tiny unhealthy at the hub', HEALTH_INTERVAL_S * 1000 + 5000);
    // Discovery's round while it is gone (the owner's Rescan does the same).
    await bridge.invoke('engines.rescan');
    const snap = await snapshot();
    const endpoint = snap.models.find((m) => m.id === 'tiny')?.endpoints[0];
    expect(endpoint).toMatchObject({ url: llama.url, condition: 'down', health: 'unhealthy' });
    expect(snap.engines.find((e) => e.url === llama.url)).toMatchObject({ reachable: false, error: endpoint?.lastError });

    await llama.start();
    // One health interval (the failure backoff is capped by it), plus slack for a loaded machine.
    await eventually(async () => (await hubHealth('tiny')) === 'healthy', 'tiny healthy at the hub again', HEALTH_INTERVAL_S * 1000 + 3000);
    expect((await ask()).usage?.completion_tokens).toBe(2);
    expect((await snapshot()).engines.find((e) => e.url === llama.url)).toMatchObject({ reachable: true, type: 'llamacpp' });
  }, 60_000);
});
