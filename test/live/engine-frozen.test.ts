// A real llama-server frozen with SIGSTOP (a stopped process: the kernel still accepts its connections, nothing
// answers) while the agent serves it with [Agent] EngineHeadersTimeoutSeconds = 4. The first request that
// passes the deadline ends with 504 and marks the endpoint no_response at once, streaming or not; no new
// request is routed there while it is frozen; thawed (SIGCONT), it serves again after one check.
import fs from 'node:fs';
import path from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent } from '../../src/core/agent';
import { memoryLog } from '../../src/core/base/log';
import { startDevHub, type DevHub } from '../../src/cli/dev-hub';
import { freePort, modelOf, requests, TEST_KEY, tempHome, until } from '../support/stack';
import { writeConfigToml } from '../support/config-toml';
import { Llama, LLAMA_PRESENT } from '../support/live/llama';

const SKIP = 'skipped: ../shared/engines/llama.cpp is absent (this suite runs the real llama-server)';
const HEADERS_S = 4;

describe.skipIf(!LLAMA_PRESENT)(LLAMA_PRESENT ? 'live: a frozen llama-server (SIGSTOP)' : `live: frozen engine — ${SKIP}`, () => {
  const cleanup: Array<() => unknown> = [];
  let llama: Llama;
  let hub: DevHub;
  let agent: Agent;

  const client = () => new OpenAI({ baseURL: `${hub.url}/v1`, apiKey: 'any', maxRetries: 0, timeout: 60_000 });
  const endpoint = () => modelOf(agent, 'tiny')?.endpoints[0];
  /** The HTTP status the hub's client got (200 or the error's). */
  const statusOf = async (p: Promise<unknown>): Promise<number> => {
    try {
      await p;
      return 200;
    } catch (e) {
      return (e as { status?: number }).status ?? 0;
    }
  };
  const ask = (stream: boolean) =>
    statusOf(
      stream
        ? (async () => {
            for await (const _ of await client().chat.completions.create({
              model: 'tiny',
              messages: [{ role: 'user', content: 'hi' }],
              max_tokens: 2,
              stream: true,
            }))
              void _;
          })()
        : client().chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 }),
    );

  beforeAll(async () => {
    llama = new Llama(await freePort(), ['-np', '2', '--alias', 'tiny']);
    cleanup.push(() => llama.kill());
    await llama.start();
    hub = await startDevHub({ token: TEST_KEY });
    cleanup.push(() => hub.close());
    const home = tempHome('swan-live-frozen-');
    cleanup.push(() => fs.rmSync(home, { recursive: true, force: true }));
    fs.writeFileSync(path.join(home, 'models.json'), JSON.stringify({ tiny: { endpoint: llama.url } }));
    const configPath = writeConfigToml(home, {
      API: { NodeName: 'live-frozen' },
      Inference: { WebSocketURL: hub.wsUrl, ServiceURL: hub.url, ApiKey: TEST_KEY },
      // The rounds are slow on purpose: only the request's own finding can mark the endpoint in time.
      Agent: {
        EngineHeadersTimeoutSeconds: HEADERS_S,
        HealthCheckIntervalSeconds: 120,
        HeartbeatIntervalSeconds: 1,
        Discovery: false,
        DeepHealthCheckEvery: 0,
      },
    });
    agent = await Agent.create({ home, configPath, log: memoryLog(), gpu: false, discovery: false, env: { PATH: process.env.PATH } });
    cleanup.push(() => agent.stop());
    await agent.start();
    await until(() => hub.providers().some((p) => p.connected && p.health.tiny === 'healthy'), 'tiny healthy at the hub', 30_000);
    expect(await ask(false)).toBe(200);
  }, 90_000);

  afterAll(async () => {
    llama?.signal('SIGCONT');
    for (const c of cleanup.reverse()) await c();
  }, 30_000);

  for (const stream of [true, false]) {
    it(`${stream ? 'a stream: 504 at the headers deadline' : 'a non-stream request: past the headers deadline'}, the endpoint no_response at once, nothing new routed until it thaws`, async () => {
      llama.signal('SIGSTOP');
      const t0 = performance.now();
      const first = ask(stream);
      // Stream: 504 at the deadline. Non-stream: its headers would come only with the answer, so the deadline
      // marks the endpoint and the call waits on (to EngineTotalTimeoutSeconds) until the engine thaws.
      await until(() => endpoint()?.condition === 'no_response', 'the endpoint marked no_response', (HEADERS_S + 6) * 1000);
      const markedAfterS = (performance.now() - t0) / 1000;
      expect(markedAfterS).toBeGreaterThanOrEqual(HEADERS_S - 0.5);
      expect(markedAfterS).toBeLessThan(HEADERS_S + 3);
      expect(endpoint()).toMatchObject({ health: 'unhealthy', condition: 'no_response' });
      if (stream) expect(await first).toBe(504);
      // Not routed: refused at once, not another 4 s wait on the frozen engine.
      const known = new Set((await requests(agent)).map((r) => r.id));
      const t1 = performance.now();
      const next = await ask(stream);
      expect(next).toBeGreaterThanOrEqual(400);
      expect(next).not.toBe(504);
      expect(performance.now() - t1).toBeLessThan(2000);
      // Refused by the hub (told the model is unhealthy) or by the scheduler: never sent to the engine.
      expect((await requests(agent)).filter((r) => !known.has(r.id) && r.status !== 'rejected')).toEqual([]);
      llama.signal('SIGCONT');
      await until(() => endpoint()?.health === 'healthy', 'healthy again once thawed', 30_000);
      if (!stream) expect(await first).toBe(200); // it waited on, and got its answer once the engine thawed
      expect(await ask(stream)).toBe(200);
    }, 90_000);
  }
});
