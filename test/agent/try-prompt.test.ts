// The "Try it" test prompt: a short chat through the same runner, scheduler and engine client as hub
// traffic, recorded as a local request (in the request book and the ledger), streaming its text.
import { afterEach, expect, it } from 'vitest';
import type { UsageRecord } from '../../src/shared/types';
import { startStack, until, type Stack } from '../support/stack';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

it('streams an answer as a local request and records it in the ledger', async () => {
  stack = await startStack({ hub: false, engines: [{ models: ['m-a'] }] });
  await until(() => stack!.agent.registry.get('m-a')?.enabled === true, 'model m-a enabled');
  let deltas = 0;
  const finished: UsageRecord[] = [];
  stack.agent.book.on('text', () => deltas++);
  stack.agent.book.on('finished', (r) => finished.push(r));
  const { id } = (await stack.agent.invoke('models.try', { model: 'm-a', prompt: 'Say hello.' })) as { id: string };
  expect(id).toMatch(/^try-/);
  await until(() => finished.length === 1, 'the test prompt finished');
  const r = finished[0]!;
  expect(r).toMatchObject({ requestId: id, source: 'local', model: 'm-a', status: 'ok' });
  expect(r.ttftMs).not.toBeNull();
  expect(deltas).toBeGreaterThan(0);
  expect(stack.agent.book.text(id).length).toBeGreaterThan(0);
  // The engine saw one chat request through the scheduler's endpoint.
  expect(stack.engines[0]!.requests.some((q) => (q.body as { messages?: unknown[] } | undefined)?.messages?.length === 1)).toBe(true);
  await until(() => (stack!.agent.ledger?.today().requests ?? 0) === 1, 'the ledger has it');
});

it('refuses an unknown or switched-off model and an empty prompt', async () => {
  stack = await startStack({ hub: false, engines: [{ models: ['m-a'] }] });
  await expect(stack.agent.invoke('models.try', { model: 'nope', prompt: 'hi' })).rejects.toThrow(/No model "nope"/);
  await stack.agent.invoke('models.setEnabled', { model: 'm-a', enabled: false });
  await expect(stack.agent.invoke('models.try', { model: 'm-a', prompt: 'hi' })).rejects.toThrow(/switched off/);
  await expect(stack.agent.invoke('models.try', { model: 'm-a', prompt: '   ' })).rejects.toThrow(/Invalid arguments for models.try/);
});
