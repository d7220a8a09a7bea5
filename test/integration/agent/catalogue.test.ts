// The real agent reads the dev hub's catalogue (GET /api/v1/models?page_size=200) and says, per
// announced model, whether the network knows its name — a models.json key is an explicit mapping (checked,
// not re-matched); an engine's own name gets its matched catalogue id and the closest ones.
import { afterEach, expect, it } from 'vitest';
import type { AgentSnapshot } from '../../../src/shared/views/snapshot';
import type { DemandView } from '../../../src/shared/views/demand';
import { startStack, TEST_KEY, until, type Stack } from '../../support/stack';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

it('marks the models the catalogue does not know and offers the closest catalogue ids', async () => {
  stack = await startStack({
    engines: [{ models: ['llama3.1:8b', 'qwen2.5:7b', 'my-finetune-v3'] }],
    models: {
      'meta-llama/Llama-3.1-8B-Instruct': { engine: 0, local_model: 'llama3.1:8b' },
      'qwen2.5:7b': { engine: 0 },
      'my-finetune-v3': { engine: 0 },
    },
  });
  const snap = async () => (await stack!.agent.invoke('snapshot.get', {})) as AgentSnapshot;
  await until(() => stack!.agent.snapshot().catalogue?.state === 'ok', 'catalogue read');
  const c = (await snap()).catalogue!;
  expect(c.url).toBe(`${stack.hub!.url}/api/v1/models?page_size=200`);
  expect(c.size).toBeGreaterThan(3);
  expect(c.models['meta-llama/Llama-3.1-8B-Instruct']).toEqual({ known: true, source: 'explicit', suggestions: [] });
  expect(c.models['qwen2.5:7b']).toMatchObject({ known: false, matchedId: 'Qwen/Qwen2.5-7B-Instruct', confidence: 1 });
  expect(c.models['qwen2.5:7b']!.suggestions[0]).toBe('Qwen/Qwen2.5-7B-Instruct');
  expect(c.models['my-finetune-v3']).toMatchObject({ known: false });
  expect(c.models['my-finetune-v3']!.matchedId).toBeUndefined();

  // The hub going away keeps the last good list (and says the refresh failed).
  await stack.hub!.close();
  // Saving the ServiceURL (here the same one) fetches the catalogue again, as the console's Settings does.
  expect(await stack.agent.invoke('settings.save', { patch: { serviceUrl: stack.hub!.url } })).toEqual({ ok: true });
  await until(() => stack!.agent.snapshot().catalogue?.state === 'error', 'the refresh failed');
  const after = stack.agent.snapshot().catalogue!;
  expect(after.state).toBe('error');
  expect(after.models['meta-llama/Llama-3.1-8B-Instruct']?.known).toBe(true);
});

it('a new ServiceURL reads the price list there at once, not when the old answer expires', async () => {
  stack = await startStack({ engines: [{ models: ['meta-llama/Llama-3.1-8B-Instruct'] }], models: { 'meta-llama/Llama-3.1-8B-Instruct': { engine: 0 } } });
  const rates = async () => ((await stack!.agent.invoke('demand.list', {})) as DemandView).rates;
  await until(async () => (await rates()).asOf !== null, 'the first price list read');
  // A network whose API does not answer: the price list says so (the key typed again: it goes somewhere new).
  expect(await stack.agent.invoke('settings.save', { patch: { serviceUrl: 'http://127.0.0.1:9', providerKey: TEST_KEY } })).toEqual({ ok: true });
  await until(async () => (await rates()).error !== undefined, 'the price list failed at the new address');
  // Back to one that answers: read again now.
  expect(await stack.agent.invoke('settings.save', { patch: { serviceUrl: stack.hub!.url } })).toEqual({ ok: true });
  await until(async () => (await rates()).error === undefined, 'the price list read at the new address');
});
