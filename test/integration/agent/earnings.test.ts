// Prices set by the owner turn served hub requests into earnings once the hub enables earnings;
// a price change is a new row, so earlier earnings keep their price.
import { afterEach, describe, expect, it } from 'vitest';
import type { PricesView } from '../../../src/shared/views/usage';
import { call, chat, readSse, registered, startStack, today, until, type Stack } from '../../support/stack';
import { summarizeTrace } from '../../support/traces';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

describe('earnings', () => {
  it('earns at the price in force when each request finished, once the hub enables earnings', async () => {
    stack = await startStack({ hub: { earningsEnabled: true }, engines: [{ chatTrace: 'vllm-chat-reasoning-include-usage.sse' }] });
    await registered(stack);
    await until(async () => (await call(stack!.agent, 'prices.list', {})).earningsEnabled, 'earnings flag read from the hub');
    const model = stack.engines[0]!.modelIds[0]!;
    const usage = summarizeTrace('vllm-chat-reasoning-include-usage.sse').usage!;
    const set = (await stack.agent.invoke('prices.set', { model, inputPerM: 1, outputPerM: 2 })) as PricesView;
    expect(set).toMatchObject({ earningsEnabled: true, prices: [expect.objectContaining({ model, inputPerM: 1, outputPerM: 2 })] });
    await readSse(await chat(stack.hub!, { model, stream: true, messages: [{ role: 'user', content: 'x' }] }));
    await until(() => today(stack!.agent).requests === 1, 'first request in the ledger');
    const first = (usage.prompt_tokens * 1 + usage.completion_tokens * 2) / 1e6;
    expect(today(stack.agent).earnings).toBeCloseTo(first, 12);
    await stack.agent.invoke('prices.set', { model, inputPerM: 10, outputPerM: 20 });
    await readSse(await chat(stack.hub!, { model, stream: true, messages: [{ role: 'user', content: 'x' }] }));
    await until(() => today(stack!.agent).requests === 2, 'second request in the ledger');
    expect(today(stack.agent).earnings).toBeCloseTo(first + first * 10, 12);
    const report = await call(stack.agent, 'usage.report', { from: Date.now() - 3_600_000, to: Date.now() + 1000, bucket: 'hour' });
    expect(report.totals.earnings).toBeCloseTo(first * 11, 12);
    await expect(stack.agent.invoke('prices.set', { model, inputPerM: -1, outputPerM: 2 })).rejects.toMatchObject({ code: 'invalid_args' });
  });

  it('earns nothing while the hub has earnings off', async () => {
    stack = await startStack();
    await registered(stack);
    const model = stack.engines[0]!.modelIds[0]!;
    await stack.agent.invoke('prices.set', { model: '*', inputPerM: 5, outputPerM: 5 });
    await readSse(await chat(stack.hub!, { model, stream: true, messages: [{ role: 'user', content: 'x' }] }));
    await until(() => today(stack!.agent).requests === 1, 'request in the ledger');
    expect(today(stack.agent).earnings).toBe(0);
    expect(((await stack.agent.invoke('prices.list', {})) as PricesView).earningsEnabled).toBe(false);
  });
});
