// The verdict in the snapshot of a real agent against the dev hub: serving and routable, not routable
// (a model the catalogue does not list), not earning (earnings off), degraded (engine down) and stopped
// (paused, hub gone, agent stopped). The console, the tray and doctor show this one verdict.
import { afterEach, describe, expect, it } from 'vitest';
import type { Verdict } from '../../../src/shared/types';
import { registered, startStack, until, type Stack, type StackOptions } from '../../support/stack';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

const CATALOGUED = 'simulated-llama-3.1-8b-instruct';
const verdict = (): Verdict => stack!.agent.snapshot().verdict;
async function verdictBecomes(state: Verdict['state'], code?: string): Promise<Verdict> {
  await until(
    () => verdict().state === state && (code === undefined || verdict().reasons[0]?.code === code),
    `verdict ${state}${code ? ` (${code})` : ''}, is ${JSON.stringify(verdict())}`,
  );
  return verdict();
}
async function start(o: StackOptions): Promise<Stack> {
  stack = await startStack(o);
  await registered(stack);
  await until(() => stack!.agent.snapshot().catalogue?.state === 'ok', 'the catalogue read');
  return stack;
}

describe('verdict', () => {
  it('serving and routable: a catalogue model, a hub that pays', async () => {
    await start({ engines: [{ models: [CATALOGUED] }], hub: { earningsEnabled: true } });
    const v = await verdictBecomes('serving');
    expect(v).toMatchObject({ tone: 'ok', label: 'Serving', routable: [CATALOGUED], reasons: [] });
  });

  it('serving but not routable: a model the catalogue does not list, with what to do', async () => {
    await start({ engines: [{ models: [CATALOGUED, 'my-finetune'] }], hub: { earningsEnabled: true } });
    const v = await verdictBecomes('not_routable', 'not_in_catalogue');
    expect(v).toMatchObject({ tone: 'warn', label: 'Not routed', routable: [CATALOGUED] });
    expect(v.reasons[0]?.models).toEqual(['my-finetune']);
    expect(v.reasons[0]?.next).toBeTruthy();
  });

  it('not earning: earnings not enabled on the platform', async () => {
    await start({ engines: [{ models: [CATALOGUED] }], hub: { earningsEnabled: false } });
    const v = await verdictBecomes('not_earning', 'earnings_disabled');
    expect(v).toMatchObject({ tone: 'warn', label: 'Not earning', routable: [CATALOGUED] });
  });

  it('degraded while the engine is down, serving again once it is back; stopped when paused, when the hub goes, and when the agent stops', async () => {
    const s = await start({ engines: [{ models: [CATALOGUED] }], hub: { earningsEnabled: true } });
    await verdictBecomes('serving');
    await s.engines[0]!.setMode('down');
    const down = await verdictBecomes('degraded', 'engine_down');
    expect(down).toMatchObject({ tone: 'bad', label: 'Engine down', routable: [] });
    expect(down.headline).toContain(s.engines[0]!.url);
    await s.engines[0]!.setMode('ok');
    await verdictBecomes('serving');

    await s.agent.invoke('serving.pause', { reason: 'paused by you' });
    expect(await verdictBecomes('stopped', 'paused')).toMatchObject({ label: 'Paused', tone: 'warn' });
    await s.agent.invoke('serving.resume', {});
    await verdictBecomes('serving');

    await s.hub!.close();
    expect(await verdictBecomes('stopped')).toMatchObject({ tone: expect.stringMatching(/bad|warn/) });
    expect(['link_down', 'connecting']).toContain(verdict().reasons[0]?.code);
    await s.agent.stop();
    expect(verdict()).toMatchObject({ state: 'stopped', label: 'Stopped', reasons: [expect.objectContaining({ code: 'agent_stopped' })] });
  });
});
