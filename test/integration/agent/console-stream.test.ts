// The console's view of a streamed request through the real agent (real engine stand-in, real runner):
// the bridge's request.text deltas, joined, are the whole answer; the last request.update is 'ok' and
// comes after all of the text; per-chunk events are coalesced (no more text events than the engine's
// content chunks).
import { afterEach, expect, it } from 'vitest';
import type { BridgeEvent } from '../../../src/shared/bridge/events';
import { call, modelOf, startStack, until, type Stack } from '../../support/stack';
import { generatedText } from '../../support/traces';

const TOKENS = 40;

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

it('a console subscriber gets the whole answer, then the final update', async () => {
  stack = await startStack({ hub: false, engines: [{ models: ['m-a'], mode: { generate: TOKENS } }] });
  await until(() => modelOf(stack!.agent, 'm-a')?.enabled === true, 'model m-a enabled');
  const events: BridgeEvent[] = [];
  const off = stack.agent.subscribe((e) => events.push(e));
  const { id } = (await stack.agent.invoke('models.try', { model: 'm-a', prompt: 'Say hello.' })) as { id: string };
  const mine = () => events.filter((e) => (e.type === 'request.text' && e.id === id) || (e.type === 'request.update' && e.request.id === id));
  await until(() => mine().some((e) => e.type === 'request.update' && e.request.status === 'ok'), 'final update on the bridge');
  // One more turn: nothing may follow the final update.
  await new Promise<void>((r) => setImmediate(r));
  off();
  const seq = mine();
  const texts = seq.filter((e): e is Extract<BridgeEvent, { type: 'request.text' }> => e.type === 'request.text');
  expect(texts.map((t) => t.delta).join('')).toBe(generatedText(TOKENS));
  expect(await call(stack.agent, 'requests.text', { id })).toBe(generatedText(TOKENS));
  expect(texts.length).toBeLessThanOrEqual(TOKENS);
  const last = seq.at(-1)!;
  expect(last.type === 'request.update' && last.request.status).toBe('ok');
  const lastText = seq.lastIndexOf(texts.at(-1)!);
  expect(seq.findIndex((e) => e.type === 'request.update' && e.request.status === 'ok')).toBeGreaterThan(lastText);
  expect(stack.agent.listenerCount('bridge')).toBe(0);
});
