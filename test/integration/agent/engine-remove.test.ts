// An engine added in the console can be removed there: it is no longer probed, its models leave the set
// and the hub's announcement (also while it is down and its model was switched on), `doctor` stops
// checking it, and an address that was not added in the console is refused with where to remove it.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { doctorCommand } from '../../../src/cli/doctor';
import { BridgeError } from '../../../src/shared/bridge-error';
import { startTestEngine, type TestEngine } from '../../support/engine-server';
import { call, startStack, until, type Stack } from '../../support/stack';

let stack: Stack | undefined;
const extra: TestEngine[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await stack?.close();
  stack = undefined;
  for (const e of extra.splice(0)) await e.close();
});

async function doctorOutput(home: string): Promise<{ code: number; out: string }> {
  let out = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += chunk.toString();
    return true;
  });
  const code = await doctorCommand({ home, env: {} });
  vi.restoreAllMocks();
  return { code, out };
}

describe('removing an engine added in the console', () => {
  it('a dead added engine whose model was served leaves the models, the announcement, settings and doctor', async () => {
    // A model the dev hub's catalogue lists, on a hub that pays: doctor's verdict is "serving" once the dead engine is gone.
    stack = await startStack({ engines: [{ engineType: 'vllm', models: ['simulated-llama-3.1-8b-instruct'] }], hub: { earningsEnabled: true } });
    const other = await startTestEngine({ engineType: 'llamacpp', models: ['tiny-llama'] });
    extra.push(other);
    // Added as the owner types it in the console: a bare HOST:PORT.
    await call(stack.agent, 'engines.addEndpoint', { url: other.url.replace(/^http:\/\//, ''), model: 'tiny-llama' });
    await until(() => stack!.hub!.providers()[0]?.models.includes('tiny-llama') ?? false, 'the added model announced');
    expect((await call(stack.agent, 'settings.get', {})).addedEndpoints).toEqual([other.url]);

    // It dies: its model stays, shown down, and doctor fails on it.
    await other.setMode('down');
    await call(stack.agent, 'engines.rescan', {});
    expect(stack.agent.snapshot().models.map((m) => m.id)).toContain('tiny-llama');
    const before = await doctorOutput(stack.home);
    expect(before.out).toContain(other.url);
    expect(before.code).toBe(1);

    const engines = await call(stack.agent, 'engines.removeEndpoint', { url: `${other.url}/v1` });
    expect(engines.map((e) => e.url)).not.toContain(other.url);
    expect(stack.agent.snapshot().models.map((m) => m.id)).not.toContain('tiny-llama');
    await until(() => !(stack!.hub!.providers()[0]?.models.includes('tiny-llama') ?? true), 'the model no longer announced');
    expect((await call(stack.agent, 'settings.get', {})).addedEndpoints).toEqual([]);
    const settings = JSON.parse(fs.readFileSync(path.join(stack.home, 'settings.json'), 'utf8')) as { extraEndpoints?: unknown[] };
    expect(settings.extraEndpoints).toEqual([]);

    const after = await doctorOutput(stack.home);
    expect(after.out).not.toContain(other.url);
    expect(after.code, after.out).toBe(0);
  });

  it('an address that was not added in the console is refused, with where it comes from', async () => {
    stack = await startStack({ engines: [{ engineType: 'vllm' }] });
    const url = stack.engines[0]!.url;
    const refused = await call(stack.agent, 'engines.removeEndpoint', { url }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(BridgeError);
    expect((refused as BridgeError).code).toBe('not_found');
    expect(stack.agent.snapshot().engines.map((e) => e.url)).toContain(url);
  });
});
