// An engine that goes away and comes back serves again however it was added: the model stays in the
// table while its engine is down (shown as down, with the reason), its endpoint keeps being probed, and
// it is healthy at the hub and answering within a health interval of the engine answering again. The
// Engines list and the models table tell one state of the endpoint.
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentSnapshot } from '../../../src/shared/views/snapshot';
import { startTestEngine, type TestEngine } from '../../support/engine-server';
import { chat, modelOf, registered, startStack, until, type Stack } from '../../support/stack';

let stack: Stack | undefined;
const extra: TestEngine[] = [];
afterEach(async () => {
  await stack?.close();
  stack = undefined;
  for (const e of extra.splice(0)) await e.close();
});

const ask = (model: string) => chat(stack!.hub!, { model, messages: [{ role: 'user', content: 'hi' }] });
/** The model's health at the hub, once the hub also has it in the provider's registered models (what it routes by). */
const hubHealth = (model: string) => {
  const p = stack!.hub!.providers().find((x) => x.connected);
  return p?.models.includes(model) ? p.health[model] : undefined;
};
const engineRow = (url: string) => stack!.agent.snapshot().engines.find((e) => e.url === url);

/** A second engine added in the console (not in models.json), its model switched on and served. */
async function addedEngine(): Promise<{ s: Stack; other: TestEngine }> {
  // The stack's health interval is 0.1 s; discovery's own round is 30 s, so only health can bring it back here.
  const s = await startStack({ engines: [{ engineType: 'vllm' }] });
  stack = s;
  const other = await startTestEngine({ engineType: 'llamacpp', models: ['tiny-llama'] });
  extra.push(other);
  await s.agent.invoke('engines.addEndpoint', { url: other.url, model: 'tiny-llama' });
  await registered(s);
  await until(() => hubHealth('tiny-llama') === 'healthy', 'tiny-llama announced and healthy at the hub');
  expect((await ask('tiny-llama')).status).toBe(200);
  return { s, other };
}

describe('an engine added in the console comes back', () => {
  it('killed, seen gone by a discovery round, restarted: the model is kept as down, then serves again (hub 200)', async () => {
    const { s, other } = await addedEngine();
    await other.setMode('down');
    await until(() => modelOf(s.agent, 'tiny-llama')?.health === 'unhealthy', 'tiny-llama unhealthy');
    // Discovery's round (or the owner's Rescan) while it is down: before, this dropped the model for good.
    await s.agent.invoke('engines.rescan', {});
    const down = modelOf(s.agent, 'tiny-llama');
    expect(down).toMatchObject({ enabled: true, health: 'unhealthy', endpoints: [expect.objectContaining({ url: other.url, condition: 'down' })] });
    // One state: the Engines list says what the models table says, with the same reason.
    expect(engineRow(other.url)).toMatchObject({ reachable: false, error: down?.endpoints[0]?.lastError });
    await until(() => hubHealth('tiny-llama') === 'unhealthy', 'the hub told it is unhealthy');

    await other.setMode('ok');
    await until(() => hubHealth('tiny-llama') === 'healthy', 'tiny-llama healthy at the hub again');
    expect(modelOf(s.agent, 'tiny-llama')?.endpoints[0]).toMatchObject({ health: 'healthy' });
    expect(engineRow(other.url)).toMatchObject({ reachable: true, models: ['tiny-llama'] });
    expect(engineRow(other.url)?.error).toBeUndefined();
    expect((await ask('tiny-llama')).status).toBe(200);
  });

  it('killed and restarted before discovery looks: the Engines list never says "reachable" while health says down', async () => {
    const { s, other } = await addedEngine();
    await other.setMode('down');
    await until(() => modelOf(s.agent, 'tiny-llama')?.endpoints[0]?.condition === 'down', 'down');
    expect(engineRow(other.url)?.reachable).toBe(false);
    const snap = (await s.agent.invoke('snapshot.get', {})) as AgentSnapshot;
    expect(snap.engines.find((e) => e.url === other.url)?.reachable).toBe(false);
    await until(() => hubHealth('tiny-llama') === 'unhealthy', 'the hub told it is unhealthy');
    await other.setMode('ok');
    await until(() => hubHealth('tiny-llama') === 'healthy', 'healthy at the hub again');
    expect((await ask('tiny-llama')).status).toBe(200);
  });

  it('Serve off then on while the engine is down, then it comes back: it serves (no state kept from before)', async () => {
    const { s, other } = await addedEngine();
    await other.setMode('down');
    await until(() => hubHealth('tiny-llama') === 'unhealthy', 'unhealthy at the hub');
    await s.agent.invoke('models.setEnabled', { model: 'tiny-llama', enabled: false });
    await other.setMode('ok');
    await s.agent.invoke('models.setEnabled', { model: 'tiny-llama', enabled: true });
    await until(() => hubHealth('tiny-llama') === 'healthy', 'healthy at the hub after Serve on');
    expect(modelOf(s.agent, 'tiny-llama')?.health).toBe('healthy');
    expect((await ask('tiny-llama')).status).toBe(200);
  });

  it('after an agent restart with the engine still down, the added model is in the table as down; it serves once the engine is back', async () => {
    const { s, other } = await addedEngine();
    await other.setMode('down');
    const home = s.home;
    await s.agent.stop();
    const { Agent } = await import('../../../src/core/agent');
    const again = await Agent.create({ home, configPath: `${home}/config.toml`, log: s.log, gpu: false, discovery: false, env: { PATH: process.env.PATH } });
    stack = {
      ...s,
      agent: again,
      close: async () => {
        await again.stop();
        await s.close();
      },
    };
    await again.start();
    await until(() => modelOf(again, 'tiny-llama')?.endpoints[0]?.condition === 'down', 'tiny-llama shown as down');
    expect(modelOf(again, 'tiny-llama')).toMatchObject({ enabled: true, health: 'unhealthy' });
    await other.setMode('ok');
    await until(() => modelOf(again, 'tiny-llama')?.health === 'healthy', 'healthy once the engine answers');
    await until(() => hubHealth('tiny-llama') === 'healthy', 'healthy at the hub');
    expect((await ask('tiny-llama')).status).toBe(200);
  });
});
