// What a home machine's disk does to the agent: it fills up, or the system sets it read-only. On a real
// small disk (a tmpfs, test/support/faults/small-disk.ts): the agent (its CLI, as a child) serves while
// the disk is full, the rows of what the hub was told are written anyway (space kept in reserve is
// released), SIGTERM ends it in seconds (the log's flush once retried its ENOSPC write for ever), and the
// rows are in the ledger when it starts again. An agent started on a read-only home says so in one line.
// The log itself on a full disk: no uncaught error, a coded problem, a bounded flush, and it writes again;
// and the verdict says disk_full while it lasts.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentLog, type LogFileProblem } from '../../src/core/base/log';
import { Agent } from '../../src/core/agent';
import { TEST_KEY } from '../support/stack';
import { writeConfigToml } from '../support/config-toml';
import { canMount, mountSmallDisk, type SmallDisk } from '../support/faults/small-disk';
import { killAgents, servingRig, startAgent } from '../support/faults/disk-agent';

const MODEL = 'disk-model';
const BURST = 30;
/** The bound: a service manager's stop must find the process gone well before it would SIGKILL. */
const STOP_WITHIN_MS = 10_000;

const mounts: SmallDisk[] = [];
afterEach(() => {
  killAgents();
  for (const d of mounts.splice(0)) d.unmount();
});

describe.skipIf(!canMount())('a full disk (a tmpfs filled to ENOSPC)', () => {
  const rig = servingRig(MODEL);

  it('serves on, SIGTERM ends the agent in under 10 s, and every row the hub was told of is in the ledger after restart', async () => {
    const disk = mountSmallDisk(96);
    mounts.push(disk);
    const home = disk.dir;
    const { hub } = rig;
    rig.configure(home);
    hub.reset();
    const agent = startAgent(home);
    try {
      await hub.waitForModel(MODEL, 60_000);
    } catch (e) {
      agent.child.kill('SIGKILL');
      throw new Error(`${(e as Error).message}\n${agent.output()}`);
    }
    expect(fs.statSync(path.join(home, 'ledger.reserve')).size).toBe(16 * 1024 * 1024);
    disk.fill();
    expect(disk.available()).toBe(0);

    const ids = Array.from({ length: BURST }, (_, i) => `full-${i}`);
    const allEnded = new Promise<void>((resolve) => {
      const onEnd = (): void => {
        if (hub.ends.length < BURST) return;
        hub.off('end', onEnd);
        resolve();
      };
      hub.on('end', onEnd);
    });
    ids.forEach((id, i) => hub.sendInference(id, MODEL, { messages: [{ role: 'user', content: `q${i}` }], max_tokens: 5 + (i % 20) }));
    await allEnded;
    const told = new Map(hub.ends.map((e) => [e.requestId, e]));
    expect(hub.ends.filter((e) => e.error)).toEqual([]);
    // The disk refused the ledger: the reserve was released for the rows (and the log kept off the disk).
    expect(fs.existsSync(path.join(home, 'ledger.reserve'))).toBe(false);

    const t0 = Date.now();
    agent.child.kill('SIGTERM');
    const { code } = await agent.exited;
    const stopMs = Date.now() - t0;
    expect(stopMs).toBeLessThan(STOP_WITHIN_MS);
    expect(code).toBe(0);
    expect(agent.output()).not.toMatch(/uncaught exception|unhandled promise rejection/i);

    // Space comes back; the agent starts again on the same home (its lock was let go) and stops.
    disk.free();
    hub.reset();
    const again = startAgent(home);
    await hub.waitForModel(MODEL, 60_000).catch((e: Error) => {
      again.child.kill('SIGKILL');
      throw new Error(`${e.message}\n${again.output()}`);
    });
    again.child.kill('SIGTERM');
    expect((await again.exited).code).toBe(0);

    const db = new Database(path.join(home, 'ledger.sqlite'), { readonly: true });
    try {
      const rows = db.prepare(`SELECT request_id, tokens_in, tokens_out, status FROM usage WHERE request_id LIKE 'full-%'`).all() as Array<{
        request_id: string;
        tokens_in: number;
        tokens_out: number;
        status: string;
      }>;
      const byId = new Map(rows.map((r) => [r.request_id, r]));
      expect([...byId.keys()].sort()).toEqual([...ids].sort());
      for (const id of ids)
        expect({ id, in: byId.get(id)!.tokens_in, out: byId.get(id)!.tokens_out }).toEqual({ id, in: told.get(id)!.tokensIn, out: told.get(id)!.tokensOut });
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    } finally {
      db.close();
    }
  }, 240_000);
});

describe.skipIf(!canMount())('a read-only home (a tmpfs remounted read-only)', () => {
  it('the agent exits 2 with one line naming the home and what to do, no stack trace', async () => {
    const disk = mountSmallDisk(8);
    mounts.push(disk);
    writeConfigToml(disk.dir, { Inference: { Enable: false, ApiKey: TEST_KEY }, Agent: { Discovery: false } });
    disk.readOnly(true);
    const agent = startAgent(disk.dir);
    const { code } = await agent.exited;
    expect(code).toBe(2);
    const lines = agent
      .stderr()
      .split('\n')
      .filter((l) => l.trim() !== '');
    expect(lines, agent.output()).toHaveLength(1);
    expect(lines[0]).toContain(disk.dir);
    expect(lines[0]).toMatch(/read-only/);
    expect(agent.output()).not.toMatch(/\n\s+at /);
  }, 60_000);
});

describe.skipIf(!canMount())('the log on a full disk', () => {
  it('no uncaught error, one coded problem, a flush that returns, and the file written again once there is room', async () => {
    const disk = mountSmallDisk(2);
    mounts.push(disk);
    const problems: Array<LogFileProblem | null> = [];
    const uncaught: unknown[] = [];
    const onUncaught = (e: unknown): void => {
      uncaught.push(e);
    };
    process.on('uncaughtException', onUncaught);
    try {
      const file = path.join(disk.dir, 'logs', 'agent.jsonl');
      const log = new AgentLog({ file, console: false });
      log.on('file', (p: LogFileProblem | null) => problems.push(p));
      const l = log.child('fill');
      l.info('before');
      await log.flush();
      disk.fill();
      const failed = new Promise<void>((resolve) => log.once('file', () => resolve()));
      for (let i = 0; i < 200; i++) l.info(`while full ${i} ${'y'.repeat(100)}`);
      await failed;
      expect(log.fileProblem()?.code).toBe('disk_full');
      const t0 = Date.now();
      await log.flush(1_000);
      expect(Date.now() - t0).toBeLessThan(1_500);

      disk.free();
      const back = new Promise<void>((resolve) => log.once('file', () => resolve()));
      l.info('room again');
      await back;
      expect(log.fileProblem()).toBeNull();
      await log.flush();
      expect(fs.readFileSync(file, 'utf8')).toContain('room again');
      expect(problems.map((p) => p?.code ?? null)).toEqual(['disk_full', null]);
      await log.close();
    } finally {
      process.off('uncaughtException', onUncaught);
    }
    expect(uncaught).toEqual([]);
  }, 30_000);
});

describe.skipIf(!canMount())('the verdict on a full home disk', () => {
  it('says disk_full (degraded) while the disk is full, and no more once there is room', async () => {
    const disk = mountSmallDisk(8);
    mounts.push(disk);
    const configPath = writeConfigToml(disk.dir, { Inference: { Enable: false, ApiKey: TEST_KEY }, Agent: { Discovery: false } });
    const log = new AgentLog({ file: path.join(disk.dir, 'logs', 'agent.jsonl'), console: false });
    const agent = await Agent.create({ home: disk.dir, configPath, log, gpu: false, discovery: false, env: { PATH: process.env.PATH } });
    await agent.start();
    try {
      const diskCodes = (): string[] =>
        agent
          .snapshot()
          .verdict.reasons.map((r) => r.code)
          .filter((c) => c.startsWith('disk_'));
      expect(diskCodes()).toEqual([]);
      await log.flush();
      disk.fill();
      const full = new Promise<void>((resolve) => log.once('file', () => resolve()));
      for (let i = 0; i < 50; i++) log.child('test').info(`a line while full ${i}`);
      await full;
      expect(diskCodes()).toEqual(['disk_full']);
      expect(agent.snapshot().verdict.reasons.find((r) => r.code === 'disk_full')).toMatchObject({ state: 'degraded' });
      disk.free();
      const back = new Promise<void>((resolve) => log.once('file', () => resolve()));
      log.child('test').info('room again');
      await back;
      expect(diskCodes()).toEqual([]);
    } finally {
      await agent.stop();
      await log.close();
    }
  }, 60_000);
});
