// The guard rails on the real agent, fed by its real GPU sampler reading the stand-in nvidia-smi (its
// temperature set through a file, as the e2e stand-in allows): over the 85 °C ceiling the engine serves half
// its limit, then serving pauses with the 'gpu_hot' cause (the models are withdrawn from the hub, the "paused
// by itself" alert is raised), and once the GPU is cool again both are lifted and the hub's request answered.
// Each decision is in the ledger's file (rail_events) with its stable code, in the order it was made.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, chat, registered, startStack, until, type Stack } from '../../support/stack';
import { repoRoot } from '../../support/traces';

const FAKE_GPU = path.join(repoRoot, 'e2e', 'support', 'fake-gpu');

describe('GPU guard rails', () => {
  let s: Stack;
  let tempFile: string;
  const model = () => s.agent.snapshot().models[0]!;

  beforeAll(async () => {
    tempFile = path.join(fs.mkdtempSync(path.join(repoRoot, 'node_modules', '.tmp-guard-')), 'temp');
    fs.writeFileSync(tempFile, '60');
    s = await startStack({
      gpu: true,
      agent: { GpuSampleIntervalSeconds: 0.1, GpuTemperatureCeilingC: 85 },
      env: { PATH: `${FAKE_GPU}${path.delimiter}${process.env.PATH ?? ''}`, FAKE_GPU_TEMP_FILE: tempFile },
    });
    await registered(s);
  }, 30_000);

  afterAll(async () => {
    await s?.close();
    fs.rmSync(path.dirname(tempFile), { recursive: true, force: true });
  }, 30_000);

  it('hot: half the limit, then paused with its cause; cool: both lifted', async () => {
    await until(() => s.agent.snapshot().gpu.gpus.length === 1, 'the GPU detected');
    const full = model().maxConcurrent;
    expect(full).toBeGreaterThanOrEqual(2);

    fs.writeFileSync(tempFile, '88');
    await until(() => model().maxConcurrent === Math.floor(full / 2), 'half the limit', 10_000);
    await until(() => s.agent.snapshot().pause.cause === 'gpu_hot', 'paused by the rails', 10_000);
    expect((await call(s.agent, 'alerts.list', {})).map((a) => a.kind)).toContain('auto_paused');
    expect(s.agent.snapshot().pause.reason).toContain('GPU 0 at 88 °C (ceiling 85 °C)');
    // Paused: nothing is announced, so the hub sends nothing.
    await until(() => (s.hub!.providers().find((p) => p.connected)?.models ?? []).length === 0, 'withdrawn from the hub', 5000);

    fs.writeFileSync(tempFile, '70');
    await until(() => !s.agent.snapshot().pause.paused, 'resumed once cool', 10_000);
    await until(() => model().maxConcurrent === full, 'the full limit again', 5000);
    await until(
      () =>
        s
          .hub!.providers()
          .find((p) => p.connected)
          ?.models.includes(model().id) === true,
      'announced again',
      5000,
    );
    expect((await chat(s.hub!, { model: model().id, messages: [{ role: 'user', content: 'hi' }] })).status).toBe(200);

    // The ledger's file holds the decisions (written before each is applied, so they are there by now).
    const db = new Database(path.join(s.home, 'ledger.sqlite'), { readonly: true });
    let rows: Array<{ code: string; rail: string; cause: string; active: number; gpu: number | null }>;
    try {
      rows = db.prepare('SELECT code, rail, cause, active, gpu FROM rail_events ORDER BY id').all() as typeof rows;
    } finally {
      db.close();
    }
    expect(rows[0]!.code).toBe('rails_start');
    expect(rows.filter((r) => r.rail === 'throttle').map((r) => [r.code, r.active, r.gpu])).toEqual([
      ['gpu_hot_throttle', 1, 0],
      ['gpu_hot_pause', 1, 0],
      ['gpu_cool_resume', 0, 0],
    ]);
    expect(rows.filter((r) => r.cause === 'gpu_hot').map((r) => r.code)).toEqual([
      'gpu_hot_throttle',
      'gpu_hot_pause',
      'pause_gpu_hot',
      'gpu_cool_resume',
      'resume_gpu_hot',
    ]);
    // The read model: time paused by the rails today, under its cause only.
    const rails = await call(s.agent, 'usage.rails', { from: Date.now() - 3_600_000, to: Date.now() + 1000 });
    expect(Object.keys(rails.summary.pausedByCause)).toEqual(['gpu_hot']);
    expect(rails.summary.pausedByCause.gpu_hot).toBeGreaterThan(0);
    expect(rails.summary.throttledByCause.gpu_hot).toBeGreaterThanOrEqual(rails.summary.pausedByCause.gpu_hot!);
    expect(rails.summary.openPause).toEqual([]);
    expect(rails.recent.map((e) => e.code).slice(0, 2)).toEqual(['resume_gpu_hot', 'gpu_cool_resume']);
  }, 60_000);
});
