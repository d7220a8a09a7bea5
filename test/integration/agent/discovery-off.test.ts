// With discovery off ([Agent] Discovery = false / --no-discovery) the default ports are not probed, but
// what the owner named still is: an endpoint added in the console, and the engines behind models.json,
// so the Engines card shows them with their detected type.
import type { AgentSnapshot } from '../../../src/shared/views/snapshot';
import type { EngineInfo } from '../../../src/shared/types';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestEngine, type TestEngine } from '../../support/engine-server';
import { startStack, until, type Stack } from '../../support/stack';

let stack: Stack | undefined;
const extra: TestEngine[] = [];
afterEach(async () => {
  await stack?.close();
  stack = undefined;
  for (const e of extra.splice(0)) await e.close();
});

describe('discovery off', () => {
  it('the engine behind a models.json entry is probed: the Engines list shows it with its type, and the model gets that type', async () => {
    stack = await startStack({ engines: [{ engineType: 'ollama' }] });
    const url = stack.engines[0]!.url;
    // Health may see it answer before discovery has read its type: the claim is the typed entry.
    await until(() => stack!.agent.snapshot().engines.some((e) => e.url === url && e.reachable && e.type !== 'unknown'), 'the models.json engine probed');
    const snap = stack.agent.snapshot();
    expect(snap.discovery).toBe(false);
    expect(snap.engines.find((e) => e.url === url)).toMatchObject({ type: 'ollama', reachable: true });
    expect(snap.models.flatMap((m) => m.endpoints.map((e) => e.engineType))).toEqual(['ollama']);
  });

  it('Add endpoint probes the address the owner gave; its models appear (switched on when named); a dead address says why', async () => {
    stack = await startStack({ engines: [{ engineType: 'vllm' }] });
    const other = await startTestEngine({ engineType: 'llamacpp', models: ['tiny-llama'] });
    extra.push(other);
    const engines = (await stack.agent.invoke('engines.addEndpoint', { url: `${other.url}/v1`, model: 'tiny-llama' })) as EngineInfo[];
    expect(engines.find((e) => e.url === other.url)).toMatchObject({ type: 'llamacpp', reachable: true, models: ['tiny-llama'], origin: 'owner' });
    const snap = (await stack.agent.invoke('snapshot.get', {})) as AgentSnapshot;
    expect(snap.models.find((m) => m.id === 'tiny-llama')).toMatchObject({
      enabled: true,
      endpoints: [expect.objectContaining({ url: other.url, engineType: 'llamacpp' })],
    });
    await until(() => stack!.hub!.providers()[0]?.models.includes('tiny-llama') ?? false, 'the added model announced to the hub');

    const dead = (await stack.agent.invoke('engines.addEndpoint', { url: 'http://127.0.0.1:9' })) as EngineInfo[];
    const d = dead.find((e) => e.url === 'http://127.0.0.1:9');
    expect(d?.reachable).toBe(false);
    expect(d?.error).toBeTruthy();
  });

  it('Rescan with discovery off probes the owner-named addresses again (a restarted engine comes back)', async () => {
    stack = await startStack({ engines: [{ engineType: 'sglang' }] });
    const engine = stack.engines[0]!;
    await until(() => stack!.agent.snapshot().engines.some((e) => e.url === engine.url && e.reachable), 'probed');
    await engine.setMode('down');
    let list = (await stack.agent.invoke('engines.rescan', {})) as EngineInfo[];
    expect(list.find((e) => e.url === engine.url)?.reachable).toBe(false);
    await engine.setMode('ok');
    list = (await stack.agent.invoke('engines.rescan', {})) as EngineInfo[];
    expect(list.find((e) => e.url === engine.url)).toMatchObject({ reachable: true, type: 'sglang' });
  });
});
