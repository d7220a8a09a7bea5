// ModelSync with its real parts (discovery, health monitor, registry, scheduler) against a real test
// engine: a switched-on model whose engine discovery has forgotten keeps its row, shown down; the
// Engines list and the models table tell one state of each endpoint.
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { ModelSync } from '../../../src/core/engines/model-sync';
import { ModelRegistry } from '../../../src/core/models/registry';
import { SettingsFile } from '../../../src/core/config/settings-file';
import { loadConfig } from '../../../src/core/config/config';
import { ContextLengths } from '../../../src/core/engine-client/context-length';
import { EngineDiscovery } from '../../../src/core/engine-client/discovery';
import { HealthMonitor, type HealthChange } from '../../../src/core/engine-client/health';
import { memoryLog } from '../../../src/core/base/log';
import { Scheduler } from '../../../src/core/scheduler/scheduler';
import { writeConfigToml } from '../../support/config-toml';
import { startTestEngine, type TestEngine } from '../../support/engine-server';
import { tempHome } from '../../support/stack';

const open: Array<() => unknown> = [];
afterEach(async () => {
  for (const f of open.splice(0).reverse()) await f();
});

async function world(engine: TestEngine) {
  const home = tempHome();
  open.push(() => fs.rmSync(home, { recursive: true, force: true }));
  fs.writeFileSync(`${home}/models.json`, '{}');
  const config = loadConfig(writeConfigToml(home, { Inference: { ApiKey: 'k' } }), {});
  const settings = SettingsFile.in(home);
  const log = memoryLog();
  const registry = new ModelRegistry();
  const scheduler = new Scheduler({});
  const health = new HealthMonitor({ intervalMs: 60_000, retryMs: 60_000 });
  // A default-port engine (found by probing), forgotten by discovery as soon as it stops answering.
  const discovery = new EngineDiscovery({ probeUrls: [engine.url], keepMissingMs: 0, intervalMs: 0 });
  open.push(() => scheduler.close());
  // As the agent's wiring (wireEngines) does: health's changes reach the registry.
  health.on('change', (c: HealthChange) => registry.setEndpointHealth(c.url, c.health, c.error, c.condition));
  const sync = new ModelSync({
    config,
    settings,
    log,
    l: log.child('test'),
    registry,
    scheduler,
    health,
    discovery,
    contexts: new ContextLengths(),
    autoDiscovery: true,
    announced: () => registry.announced(),
    announce: () => undefined,
  });
  return { sync, registry, settings, health };
}

describe('ModelSync', () => {
  it('a switched-on model whose engine discovery forgot stays in the table as down, its endpoint still probed; switched off, it goes', async () => {
    const engine = await startTestEngine({ engineType: 'ollama', models: ['qwen2.5:7b'] });
    open.push(() => engine.close());
    const { sync, registry, settings, health } = await world(engine);
    await sync.rescan();
    expect(registry.all().map((m) => m.id)).toEqual(['qwen2.5:7b']);
    settings.update((s) => ({ ...s, models: { 'qwen2.5:7b': { enabled: true } } }));
    sync.rebuild();
    expect(registry.announced()).toEqual(['qwen2.5:7b']);

    await engine.setMode('down');
    await sync.rescan();
    expect(registry.announced()).toEqual(['qwen2.5:7b']);
    expect(health.states().map((h) => h.url)).toEqual([engine.url]);
    const [row] = registry.view(() => ({ inFlight: 0, queued: 0, endpointInFlight: () => 0, maxConcurrent: 1, maxQueue: 1 }));
    expect(row).toMatchObject({ health: 'unhealthy', endpoints: [expect.objectContaining({ url: engine.url, condition: 'down' })] });
    const listed = sync.engineList().find((e) => e.url === engine.url);
    expect(listed).toMatchObject({ reachable: false, type: 'ollama', models: ['qwen2.5:7b'], error: row?.endpoints[0]?.lastError });

    settings.update((s) => ({ ...s, models: { 'qwen2.5:7b': { enabled: false } } }));
    sync.rebuild();
    await sync.rescan();
    expect(registry.all()).toEqual([]);
    expect(sync.engineList()).toEqual([]);
  });
});
