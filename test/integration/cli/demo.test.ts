// `swan-provider demo` shows what earning looks like: its dev hub has network rates and earnings on, both
// simulated models are in its own catalogue, the verdict is "serving" (routed and earning), and the
// agent finds none of the demo's own files readable by others.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentSnapshot } from '../../../src/shared/views/snapshot';
import { CliProcess } from '../../support/cli/cli';
import { Bridge, eventually } from '../../support/live/llama';
import { tempHome } from '../../support/stack';

const cleanup: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

describe('demo', () => {
  it('serves both simulated models routed and earning, with private files from the start', async () => {
    const h = tempHome();
    cleanup.push(() => fs.rmSync(h, { recursive: true, force: true }));
    const demo = CliProcess.start(['demo', '--home', h, '--console', '127.0.0.1:0']);
    cleanup.push(() => demo.stop());
    const url = (await demo.line(/console: (http:\/\/\S+)/, 'console URL', 60_000))[1]!;
    const bridge = await Bridge.open(url);
    cleanup.push(() => bridge.close());
    const snap = await eventually(
      async () => {
        const s = await bridge.invoke<AgentSnapshot>('snapshot.get');
        return s.verdict.state === 'serving' && s.catalogue?.state === 'ok' ? s : undefined;
      },
      'the demo serving, routed and earning',
      20_000,
    );
    expect(snap.verdict.routable.sort()).toEqual(['simulated-llama-3.1-8b-instruct', 'simulated-qwen2.5-7b-instruct']);
    expect(Object.values(snap.catalogue!.models).every((m) => m.known)).toBe(true);
    expect(snap.providerStatus?.earningsEnabled).toBe(true);
    const log = fs.readFileSync(path.join(h, 'demo', 'logs', 'agent.jsonl'), 'utf8');
    expect(log).not.toContain('readable by other users');
    for (const f of ['config.toml', 'models.json']) expect(fs.statSync(path.join(h, 'demo', f)).mode & 0o077).toBe(0);
  }, 90_000);
});
