// The "Try it" test prompt: a short chat through the same runner, scheduler and engine client as hub
// traffic, shown as a local request in the request book, streaming its text; the owner's own test is not
// usage, so the Dashboard's count and the ledger leave it out.
import { afterEach, expect, it } from 'vitest';
import type { BridgeEvent } from '../../../src/shared/bridge/events';
import { call, chat, ledgerRows, readSse, registered, requests, startStack, today, until, type Stack } from '../../support/stack';
import { generatedText } from '../../support/traces';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

it('streams an answer as a local request; the Dashboard count and the ledger leave it out', async () => {
  stack = await startStack({ engines: [{ models: ['m-a'], mode: { generate: 12 } }] });
  await registered(stack);
  const events: BridgeEvent[] = [];
  const off = stack.agent.subscribe((e) => events.push(e));
  const { id } = await call(stack.agent, 'models.try', { model: 'm-a', prompt: 'Say hello.' });
  expect(id).toMatch(/^try-/);
  await until(() => events.some((e) => e.type === 'request.update' && e.request.id === id && e.request.status === 'ok'), 'the test prompt finished');
  off();
  expect(events.filter((e) => e.type === 'request.text' && e.id === id).length).toBeGreaterThan(0);
  const [row] = await requests(stack.agent, 1);
  expect(row).toMatchObject({ id, source: 'local', model: 'm-a', status: 'ok', tokensOut: 12 });
  expect(row!.firstTokenAt).toBeDefined();
  expect(await call(stack.agent, 'requests.text', { id })).toBe(generatedText(12));
  // The engine saw one chat request through the scheduler's endpoint.
  expect(stack.engines[0]!.requests.some((q) => (q.body as { messages?: unknown[] } | undefined)?.messages?.length === 1)).toBe(true);
  // A hub request after it is counted; the test prompt is not.
  await readSse(await chat(stack.hub!, { model: 'm-a', stream: true, messages: [{ role: 'user', content: 'hi' }] }));
  await until(() => today(stack!.agent).requests === 1, 'the hub request counted');
  expect((await ledgerRows(stack.agent)).map((r) => r.source)).toEqual(['hub']);
});

it('refuses an unknown or switched-off model and an empty prompt', async () => {
  stack = await startStack({ hub: false, engines: [{ models: ['m-a'] }] });
  await expect(stack.agent.invoke('models.try', { model: 'nope', prompt: 'hi' })).rejects.toMatchObject({ code: 'not_found' });
  await stack.agent.invoke('models.setEnabled', { model: 'm-a', enabled: false });
  await expect(stack.agent.invoke('models.try', { model: 'm-a', prompt: 'hi' })).rejects.toMatchObject({ code: 'not_ready' });
  await expect(stack.agent.invoke('models.try', { model: 'm-a', prompt: '   ' })).rejects.toMatchObject({ code: 'invalid_args' });
});

it('the per-model report counts a model’s requests in its bucket and leaves others out', async () => {
  stack = await startStack({ engines: [{ models: ['m-a', 'm-b'] }] });
  await registered(stack);
  for (const model of ['m-a', 'm-a', 'm-b']) {
    const before = today(stack.agent).requests;
    await readSse(await chat(stack.hub!, { model, stream: true, messages: [{ role: 'user', content: 'hi' }] }));
    await until(() => today(stack!.agent).requests === before + 1, 'recorded');
  }
  const r = (await stack.agent.invoke('usage.model', { model: 'm-a', hours: 24 })) as import('../../../src/shared/views/usage').ModelReport;
  expect(r.buckets).toHaveLength(24);
  expect(r.bucketMs).toBe(3_600_000);
  expect(r.totals).toMatchObject({ model: 'm-a', requests: 2, errors: 0 });
  expect(r.buckets.reduce((s, b) => s + b.requests, 0)).toBe(2);
  expect(r.buckets.at(-1)!.requests).toBe(2);
  expect(r.buckets.at(-1)!.p50LatencyMs).not.toBeNull();
  await expect(stack.agent.invoke('usage.model', { model: 'm-a', hours: 0 })).rejects.toMatchObject({ code: 'invalid_args' });
});
