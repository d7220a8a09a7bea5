// The console's Requests page fetches a running request's text (requests.text) and then appends the
// request.text deltas that follow. That join is exact only if the reply holds exactly the text whose deltas
// reached the subscriber before it: a delta the book holds but the bridge has not sent yet (they are sent
// once per event-loop turn) would be shown twice. Real agent, real engine stand-in, many reads mid-stream.
import { afterEach, expect, it } from 'vitest';
import type { BridgeEvent } from '../../../src/shared/bridge/events';
import { call, modelOf, startStack, until, type Stack } from '../../support/stack';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

it('a text read mid-stream is exactly the deltas the subscriber got before its reply', async () => {
  stack = await startStack({ hub: false, engines: [{ models: ['m-a'], mode: { generate: 1000, delayMs: 1 } }] });
  await until(() => modelOf(stack!.agent, 'm-a')?.enabled === true, 'model m-a enabled');
  let seen = '';
  let id = '';
  let finished = false;
  const off = stack.agent.subscribe((e: BridgeEvent) => {
    if (e.type === 'request.text' && e.id === id) seen += e.delta;
    if (e.type === 'request.update' && e.request.id === id && e.request.finishedAt !== undefined) finished = true;
  });
  ({ id } = await call(stack.agent, 'models.try', { model: 'm-a', prompt: 'Count.', maxTokens: 1000 }));
  const mismatches: Array<{ fetched: number; seen: number }> = [];
  let reads = 0;
  while (!finished && reads < 2000) {
    const text = await call(stack.agent, 'requests.text', { id });
    reads++;
    if (text !== seen) mismatches.push({ fetched: text.length, seen: seen.length });
    await new Promise<void>((r) => setImmediate(r));
  }
  off();
  expect(reads).toBeGreaterThan(20);
  expect(mismatches).toEqual([]);
});
