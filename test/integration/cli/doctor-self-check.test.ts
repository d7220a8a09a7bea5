// `doctor --json`'s self-check (issue 40, item 4): the findings a running agent shows, with the same codes,
// computed by the same core code (bridge/machine-checks.ts, verdict.ts), as far as a one-shot check can say.
// Each is made true and false here, and the codes and exit codes asserted: a context window the engine does
// not honour (a test engine stating a smaller window than models.json declares), a disk nearly full under the
// home (a real tmpfs as the home, filled below the floor), no traffic since the link came up (asked of the
// agent running in the home; with none, "unknown", never a pass).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startDevHub, type DevHub } from '../../../src/cli/dev-hub';
import type { DoctorReport } from '../../../src/cli/doctor';
import { writeJsonAtomic } from '../../../src/core/config/atomic-file';
import { serveHomeQuestions } from '../../../src/core/config/home-questions';
import { homePath } from '../../../src/core/config/home-layout';
import { lockHome } from '../../../src/core/config/home-lock';
import { Agent } from '../../../src/core/agent';
import { DISK_FLOOR_BYTES, NO_TRAFFIC_AFTER_MS } from '../../../src/core/bridge/verdict';
import { startTestEngine } from '../../support/engine-server';
import { TEST_KEY, tempHome } from '../../support/stack';
import { writeConfigToml } from '../../support/config-toml';
import { Cli, runCli } from '../../support/live/llama';
import { repoRoot } from '../../support/traces';
import { canMount, mountSmallDisk, type SmallDisk } from '../../support/faults/small-disk';

const NO_GO_KEY = path.join(repoRoot, 'no-go-provider-here');
const MODEL = 'simulated-llama-3.1-8b-instruct';
const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

type SelfCheckCode = 'context_not_honoured' | 'disk_nearly_full' | 'no_traffic';

/** A home served by a test engine (stating `window` as its max_model_len when given) through the dev hub. */
async function setup(o: { home?: string; window?: number; declared?: number } = {}): Promise<{ home: string; hub: DevHub }> {
  const models = { object: 'list', data: [{ id: MODEL, object: 'model', owned_by: 'vllm', ...(o.window ? { max_model_len: o.window } : {}) }] };
  const engine = await startTestEngine({ models: [MODEL], routes: { 'GET /v1/models': models } });
  cleanup.push(() => engine.close());
  const hub = await startDevHub({ token: TEST_KEY, earningsEnabled: true });
  cleanup.push(() => hub.close());
  const home = o.home ?? tempHome();
  if (!o.home) cleanup.push(() => fs.rmSync(home, { recursive: true, force: true }));
  writeModels(home, engine.url, o.declared);
  writeConfigToml(home, {
    API: { NodeName: 'doctor-node' },
    Inference: { WebSocketURL: hub.wsUrl, ServiceURL: hub.url, ApiKey: TEST_KEY },
    Agent: { Discovery: false },
  });
  return { home, hub };
}

function writeModels(home: string, engineUrl: string, declared?: number): void {
  fs.writeFileSync(
    path.join(home, 'models.json'),
    JSON.stringify({ [MODEL]: { endpoint: `${engineUrl}/v1`, ...(declared ? { context_length: declared } : {}) } }),
  );
}

async function doctorJson(home: string): Promise<{ code: number | null; report: DoctorReport }> {
  const r = await runCli(['doctor', '--home', home, '--json'], { CP_PATH: NO_GO_KEY });
  return { code: r.code, report: JSON.parse(r.out) as DoctorReport };
}

function selfCheck(report: DoctorReport, code: SelfCheckCode): { code: string; state: string; models?: string[] } | undefined {
  return report.selfCheck?.find((c) => c.code === code);
}

describe('doctor --json: the self-check', () => {
  it('context_not_honoured: declared 8192 while the engine runs 2048 is found (degraded, exit 1); declared 2048 is clear (exit 0)', async () => {
    const { home } = await setup({ window: 2048, declared: 8192 });
    const found = await doctorJson(home);
    expect(found.report.verdict).toMatchObject({ state: 'degraded', codes: ['context_not_honoured'] });
    expect(found.report.verdict?.reasons.find((r) => r.code === 'context_not_honoured')?.models).toEqual([MODEL]);
    expect(selfCheck(found.report, 'context_not_honoured')).toMatchObject({ state: 'found', models: [MODEL] });
    expect(found.code).toBe(1);
    expect(found.report.exit).toBe(1);

    const engineUrl = (JSON.parse(fs.readFileSync(path.join(home, 'models.json'), 'utf8')) as Record<string, { endpoint: string }>)[MODEL]!.endpoint.replace(
      /\/v1$/,
      '',
    );
    writeModels(home, engineUrl, 2048);
    const clear = await doctorJson(home);
    expect(clear.report.verdict).toMatchObject({ state: 'serving', codes: [] });
    expect(selfCheck(clear.report, 'context_not_honoured')).toMatchObject({ state: 'clear' });
    expect(clear.code).toBe(0);
  }, 120_000);

  it('context_not_honoured: a declared window the engine does not state is unknown, not a pass (and no code)', async () => {
    const { home } = await setup({ declared: 8192 });
    const { code, report } = await doctorJson(home);
    expect(report.verdict?.codes).toEqual([]);
    expect(selfCheck(report, 'context_not_honoured')).toMatchObject({ state: 'unknown', models: [MODEL] });
    expect(code).toBe(0);
  }, 120_000);

  // Skipped where a tmpfs cannot be mounted (not root, or a sandbox that forbids mount), as test/faults/disk-full does.
  it.skipIf(!canMount())(
    'disk_nearly_full: a home on a tmpfs just above the 1 GiB floor is clear (exit 0); 32 MiB more written, it is found (degraded, exit 1)',
    async () => {
      const disk: SmallDisk = mountSmallDisk(DISK_FLOOR_BYTES / 1024 ** 2 + 16);
      cleanup.push(() => disk.unmount());
      const { home } = await setup({ home: disk.dir });
      const clear = await doctorJson(home);
      expect(disk.available()).toBeGreaterThan(DISK_FLOOR_BYTES);
      expect(clear.report.verdict).toMatchObject({ state: 'serving', codes: [] });
      expect(selfCheck(clear.report, 'disk_nearly_full')).toMatchObject({ state: 'clear' });
      expect(clear.code).toBe(0);

      // SmallDisk.free() removes this file.
      fs.writeFileSync(path.join(disk.dir, 'filler'), Buffer.alloc(32 * 1024 ** 2, 1));
      expect(disk.available()).toBeLessThan(DISK_FLOOR_BYTES);
      const found = await doctorJson(home);
      // The running agent's verdict says Degraded for it: doctor's exit follows the verdict (not serving: 1).
      expect(found.report.verdict).toMatchObject({ state: 'degraded', codes: ['disk_nearly_full'] });
      expect(selfCheck(found.report, 'disk_nearly_full')).toMatchObject({ state: 'found' });
      expect(found.code).toBe(1);

      disk.free();
      const again = await doctorJson(home);
      expect(again.report.verdict?.codes).toEqual([]);
      expect(again.code).toBe(0);
    },
    180_000,
  );

  it('no_traffic: with no agent running in the home it is unknown (not a pass), carries no code and leaves the exit as it was', async () => {
    const { home } = await setup();
    const { code, report } = await doctorJson(home);
    expect(selfCheck(report, 'no_traffic')).toMatchObject({ state: 'unknown' });
    expect(report.verdict?.codes).toEqual([]);
    expect(code).toBe(0);
    // The other two were checked: the home's disk (not a tmpfs here) and no window declared.
    expect(selfCheck(report, 'disk_nearly_full')?.state).not.toBe('unknown');
    expect(selfCheck(report, 'context_not_honoured')).toMatchObject({ state: 'clear' });

    // An agent holds the home (agent.json names a live pid) but does not answer (the desktop app): unknown too.
    writeJsonAtomic(homePath(home, 'agentInfo'), { pid: process.pid, host: os.hostname(), startedAt: Date.now() });
    fs.mkdirSync(homePath(home, 'consoleLinks'), { recursive: true, mode: 0o700 });
    const silent = await doctorJson(home);
    expect(selfCheck(silent.report, 'no_traffic')).toMatchObject({ state: 'unknown' });
    expect(silent.report.verdict?.codes).toEqual([]);
    expect(silent.code).toBe(0);
  }, 120_000);

  it('no_traffic: the agent running in the home (swan-provider run, no console) is asked: connected moments ago, it is clear', async () => {
    const { home, hub } = await setup();
    const agent = new Cli(['run', '--home', home, '--no-discovery', '--quiet'], { CP_PATH: NO_GO_KEY });
    cleanup.push(async () => void (await agent.stop()));
    // The health update follows the register ack: by then the agent's link is connected.
    await new Promise((resolve) => hub.events.once('health', resolve));
    const { code, report } = await doctorJson(home);
    expect(selfCheck(report, 'no_traffic')).toMatchObject({ state: 'clear' });
    expect(report.verdict?.codes).toEqual([]);
    expect(code).toBe(0);
  }, 120_000);

  it('no_traffic: the agent as the desktop app runs it (in its process, no console) answers too: connected moments ago, it is clear', async () => {
    const { home, hub } = await setup();
    // src/main/index.ts's order: the home's lock, the agent, its start, then Agent.answerHomeQuestions.
    const lock = await lockHome(home);
    const agent = await Agent.create({ home, gpu: false, discovery: false, mode: 'desktop', env: { PATH: process.env.PATH } });
    cleanup.push(async () => {
      await agent.stop();
      await lock.release();
    });
    const connected = new Promise((resolve) => hub.events.once('health', resolve));
    await agent.start();
    const stopQuestions = agent.answerHomeQuestions();
    cleanup.push(stopQuestions);
    await connected;
    const { code, report } = await doctorJson(home);
    expect(selfCheck(report, 'no_traffic')).toMatchObject({ state: 'clear' });
    expect(code).toBe(0);
    // It stops answering when told: doctor then finds the holder silent, and says unknown (never a pass).
    stopQuestions();
    expect(selfCheck((await doctorJson(home)).report, 'no_traffic')).toMatchObject({ state: 'unknown' });
  }, 120_000);

  it('no_traffic: an agent in the home connected past the window with no hub request: found (not earning, exit 1); with requests: clear (exit 0)', async () => {
    const { home } = await setup();
    // The agent of this home, as doctor finds it: agent.json names a live pid, and it answers on <home>/console-links.
    writeJsonAtomic(homePath(home, 'agentInfo'), { pid: process.pid, host: os.hostname(), startedAt: Date.now() });
    let hubRequests = 0;
    const stop = serveHomeQuestions(home, {
      selfCheck: () => ({ traffic: { hubRequests, connectedSince: Date.now() - NO_TRAFFIC_AFTER_MS - 60_000, now: Date.now() } }),
    });
    cleanup.push(stop);
    const found = await doctorJson(home);
    expect(found.report.verdict).toMatchObject({ state: 'not_earning', codes: ['no_traffic'] });
    expect(selfCheck(found.report, 'no_traffic')).toMatchObject({ state: 'found' });
    expect(found.code).toBe(1);

    hubRequests = 3;
    const clear = await doctorJson(home);
    expect(clear.report.verdict).toMatchObject({ state: 'serving', codes: [] });
    expect(selfCheck(clear.report, 'no_traffic')).toMatchObject({ state: 'clear' });
    expect(clear.code).toBe(0);
  }, 120_000);
});
