// Self-healing against the real llama-server, the agent run as users run it (`swan-provider run`), the dev
// hub and a webhook receiver: a model announced with a context window its engine does not honour (models.json
// says 4096, llama-server runs -c 256) fails every long request while its health checks pass; after 10 such
// requests it is withdrawn from the hub (the console, the log, the webhook say so), and once the hold is over a
// real probe passes and it is announced again (webhook: model_back). Killed and restarted, the engine raises
// engine_down, then engine_back.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentSnapshot } from '../../src/shared/views/snapshot';
import { freePort, tempHome } from '../support/stack';
import { Bridge, Cli, eventually, get, Llama, LLAMA_PRESENT } from '../support/live/llama';
import { writeConfigToml } from '../support/config-toml';

const KEY = 'sk-prov-live-1234567890';
const SKIP = 'skipped: ../shared/engines/llama.cpp is absent (this suite runs the real llama-server)';

describe.skipIf(!LLAMA_PRESENT)(LLAMA_PRESENT ? 'live: self-healing' : `live: self-healing — ${SKIP}`, () => {
  const cleanup: Array<() => unknown> = [];
  const hooks: Array<Record<string, unknown>> = [];
  let llama: Llama;
  let hubUrl: string;
  let bridge: Bridge;
  let agent: Cli;

  const snapshot = () => bridge.invoke<AgentSnapshot>('snapshot.get');
  const hubModels = async (): Promise<string[]> => {
    const ps = JSON.parse((await get(`${hubUrl}/dev/providers`)).body) as Array<{ connected: boolean; models: string[] }>;
    return ps.find((x) => x.connected)?.models ?? [];
  };
  const hook = (kind: string) => hooks.find((h) => h.kind === kind);

  beforeAll(async () => {
    const rx = http.createServer((req, res) => {
      let data = '';
      req.on('data', (c: Buffer) => (data += c.toString('utf8')));
      req.on('end', () => {
        hooks.push(JSON.parse(data) as Record<string, unknown>);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => rx.listen(0, '127.0.0.1', r));
    cleanup.push(() => new Promise<void>((r) => rx.close(() => r())));
    const [pl, ph] = [await freePort(), await freePort()];
    llama = new Llama(pl, ['-np', '1', '-c', '256']);
    cleanup.push(() => llama.kill());
    await llama.start();
    const hub = new Cli(['dev-hub', '--port', String(ph), '--token', KEY]);
    cleanup.push(() => hub.stop());
    hubUrl = `http://127.0.0.1:${ph}`;
    const home = tempHome('swan-live-heal-');
    cleanup.push(() => fs.rmSync(home, { recursive: true, force: true }));
    fs.writeFileSync(path.join(home, 'models.json'), JSON.stringify({ tiny: { endpoint: `${llama.url}/v1`, context_length: 4096 } }));
    writeConfigToml(home, {
      API: { NodeName: 'live-heal' },
      Inference: { WebSocketURL: `ws://127.0.0.1:${ph}`, ServiceURL: hubUrl, ApiKey: KEY },
      Agent: { HealthCheckIntervalSeconds: 1, HeartbeatIntervalSeconds: 2, DeepHealthCheckEvery: 1, SelfHealHoldSeconds: 2 },
    });
    await hub.waitFor(/dev hub listening/, 'dev hub up');
    agent = new Cli(['run', '--home', home, '--config', path.join(home, 'config.toml'), '--console', '127.0.0.1:0', '--no-discovery']);
    cleanup.push(() => agent.stop());
    bridge = await Bridge.open((await agent.waitFor(/console: (http:\/\/\S+)/, 'console URL'))[1]!);
    cleanup.push(() => bridge.close());
    const port = (rx.address() as AddressInfo).port;
    await bridge.invoke('settings.save', { patch: { alertWebhookUrl: `http://127.0.0.1:${port}/hook`, alertCooldownMinutes: 5 } });
  }, 60_000);

  afterAll(async () => {
    for (const c of cleanup.reverse()) await c();
  }, 30_000);

  it('a model failing its requests while its health passes is withdrawn (console, log, webhook) and announced again once a probe passes', async () => {
    await eventually(async () => (await hubModels()).includes('tiny') || undefined, 'tiny announced', 20_000);
    // The self-check sees it before any request does: the engine runs 256 under the announced 4096.
    const finding = await eventually(
      async () => (await snapshot()).verdict.reasons.find((r) => r.code === 'context_not_honoured'),
      'the context finding',
      10_000,
    );
    expect(finding).toMatchObject({ models: ['tiny'], text: expect.stringContaining('runs 256') });
    const client = new OpenAI({ baseURL: `${hubUrl}/v1`, apiKey: 'any', maxRetries: 0 });
    // ~700 tokens: within the 4096 the hub was told, past the 256 the engine runs.
    const long = Array.from({ length: 350 }, (_, i) => `word${i}`).join(' ');
    let failed = 0;
    for (let i = 0; i < 10; i++) {
      await client.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content: long }], max_tokens: 2 }).catch(() => failed++);
    }
    expect(failed).toBe(10);
    const m = await eventually(async () => (await snapshot()).models.find((x) => x.id === 'tiny' && x.withdrawn), 'tiny withdrawn in the console', 10_000);
    expect(m.withdrawn).toMatchObject({ reason: 'error_rate', detail: expect.stringContaining('10 of 10 requests failed') });
    expect(m.health).not.toBe('unhealthy'); // its health checks passed all along: only the requests showed it
    expect((await snapshot()).verdict.reasons.map((r) => r.code)).toContain('model_withdrawn');
    await eventually(async () => !(await hubModels()).includes('tiny') || undefined, 'the hub no longer told of tiny', 10_000);
    await eventually(async () => hook('model_withdrawn'), 'the webhook hears model_withdrawn', 10_000);
    expect(agent.out + agent.err).toMatch(/tiny withdrawn from the hub \(error_rate\)/);

    // The hold (2 s) passes; the next real probe (a 1-token chat) passes: announced again.
    await eventually(async () => hook('model_back'), 'the webhook hears model_back', 20_000);
    await eventually(async () => (await hubModels()).includes('tiny') || undefined, 'tiny announced again', 10_000);
    expect((await snapshot()).models.find((x) => x.id === 'tiny')!.withdrawn).toBeUndefined();
  }, 90_000);

  it('an engine killed raises engine_down, and started again raises engine_back', async () => {
    await llama.kill();
    await eventually(async () => hook('engine_down'), 'the webhook hears engine_down', 20_000);
    await llama.start();
    await eventually(async () => hook('engine_back'), 'the webhook hears engine_back', 20_000);
    expect(String(hook('engine_back')!.text)).toContain(llama.url);
  }, 60_000);
});
