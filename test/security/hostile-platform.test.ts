// A hostile platform API (provider status, catalogue, rates, stats, the update feed) against a CLI-run
// agent: answers nested 6,000 deep, 9 MB, 600,000 keys or not JSON. Each read fails with a plain reason
// and the agent keeps serving with what it had; it stays up and registered.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { until } from '../support/stack';
import type { PlatformMode } from './support/hostile-platform';
import { expectUnharmed, startRig, type Rig } from './support/rig';

let rig: Rig;
beforeAll(async () => {
  rig = await startRig();
}, 60_000);
afterAll(async () => {
  await rig?.close();
});

/** A bridge call with the console token (a program's credential). */
async function call(channel: string, args: unknown): Promise<{ ok: boolean; value?: unknown; code?: string }> {
  const ws = new WebSocket(`ws://127.0.0.1:${rig.consolePort}/bridge`, { headers: { authorization: `Bearer ${rig.token}` } });
  await new Promise((r, j) => ws.once('open', r).once('error', j));
  const reply = await new Promise<{ ok: boolean; value?: unknown; code?: string }>((resolve) => {
    ws.on('message', (d) => {
      const m = JSON.parse(String(d)) as { id?: number; reply?: { ok: boolean; value?: unknown; code?: string } };
      if (m.id === 1 && m.reply) resolve(m.reply);
    });
    ws.send(JSON.stringify({ id: 1, channel, args }));
  });
  ws.close();
  return reply;
}

/** What the bounded reader says of each answer (the provider status carries it). */
const REASON: Record<PlatformMode, RegExp> = {
  deep: /nests deeper than 100 levels/,
  huge: /over the \d+-byte limit/,
  // 600,000 keys take 6.5 MB: the status answer is cut off at its size limit before its keys are counted.
  wide: /more than \d+ keys|over the \d+-byte limit/,
  garbage: /not valid JSON/,
};

describe('a hostile platform API', () => {
  for (const mode of ['deep', 'huge', 'wide', 'garbage'] as PlatformMode[]) {
    it(`${mode} answers to every read: each fails plainly, the agent serves on`, async () => {
      rig.platform.mode = mode;
      const before = rig.platform.asked.length;
      const status = await call('providerStatus.refresh', {});
      expect(status.ok).toBe(true);
      expect((status.value as { error?: string }).error).toMatch(REASON[mode]);
      expect((await call('earnings.overview', { refresh: true })).ok).toBe(true);
      expect((await call('settings.save', { patch: { updateFeedUrl: `${rig.platform.url}/feed` } })).ok).toBe(true);
      const update = await call('update.check', {});
      expect(update.ok).toBe(true);
      expect((update.value as { error?: string }).error).toBeTruthy();
      await until(() => rig.platform.asked.length > before + 2, 'the platform was asked');
      await expectUnharmed(rig, `${mode} platform answers`);
    }, 60_000);
  }
});
