// The platform's record without a console: the agent fetches it on its own schedule (a headless rig's
// `usage` reads the copy), and reconciliation reasons match what happened — streams the hub cancelled
// for its client are not "never told".
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { EarningsOverview } from '../../../src/shared/views/usage';
import { call, chat, ledgerRows, registered, startStack, until, type Stack } from '../../support/stack';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

const MODEL = 'simulated-llama-3.1-8b-instruct';

describe("the platform's record", () => {
  it('is fetched by the agent with no console asking, and kept for `usage`', async () => {
    stack = await startStack({ engines: [{ models: [MODEL] }], hub: { earningsEnabled: true } });
    const file = path.join(stack.home, 'cache', 'provider-stats.json');
    await until(() => fs.existsSync(file), 'the platform record saved by the agent itself');
    const saved = JSON.parse(fs.readFileSync(file, 'utf8')) as { asOf: number; value: { totalInferences: number } };
    expect(saved.value.totalInferences).toBe(0);
    expect(fs.statSync(file).mode & 0o077).toBe(0);
  });

  it('two streams the client cancelled are not explained as "the hub was never told"', async () => {
    stack = await startStack({ engines: [{ models: [MODEL], mode: { generate: 400, delayMs: 10 } }], hub: { earningsEnabled: true } });
    await registered(stack);
    for (let i = 0; i < 2; i++) {
      const ctl = new AbortController();
      const res = await chat(stack.hub!, { model: MODEL, stream: true, messages: [{ role: 'user', content: `c${i}` }] }, { signal: ctl.signal });
      const reader = res.body!.getReader();
      await reader.read(); // the stream has started
      ctl.abort();
      await reader.read().catch(() => undefined);
    }
    await until(async () => (await ledgerRows(stack!.agent)).filter((r) => r.status === 'cancelled').length === 2, 'two cancelled rows');
    await until(
      async () => (await call(stack!.agent, 'earnings.overview', { refresh: true })).local.undelivered.requests === 0,
      'the hub-cancelled rows are not undelivered',
    );
    const o = (await call(stack.agent, 'earnings.overview', { refresh: true })) as EarningsOverview;
    expect(o.local.requests).toBe(2);
    expect(o.reasons.map((r) => r.code)).not.toContain('undelivered');
  });
});
