// A home disk that turns read-only while the agent serves, the way ext4 does after an I/O error
// (test/support/faults/failing-disk.ts: a real ext4 image, its error raised through the kernel, EROFS on
// every write from then on, files already open too). The agent (its CLI, as a child) serves on; the rows of
// what the hub was told wait in memory and are written once the disk is checked and mounted again; a
// SIGTERM while it is still read-only ends the agent within seconds, and the rows it could not write are
// counted in one coded line (ledger_rows_lost), never silently gone, never written twice. In process: the
// verdict says disk_read_only while it lasts and no more after, and the log says so once each way.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { AgentLog, type LogFileProblem } from '../../src/core/base/log';
import { Agent } from '../../src/core/agent';
import { RecordingHub, type ReceivedEnd } from '../support/recording-hub';
import { until } from '../support/stack';
import { canFailDisk, mountFailingDisk, type FailingDisk } from '../support/faults/failing-disk';
import { killAgents, servingRig, startAgent } from '../support/faults/disk-agent';

const MODEL = 'ro-model';
const BURST = 20;
/** A service manager's stop must find the process gone well before it would SIGKILL. */
const STOP_WITHIN_MS = 10_000;
/** The ledger retries with backoff (500 ms doubling to 30 s): held rows are written within one step of it. */
const WRITTEN_WITHIN_MS = 45_000;

const canRun = canFailDisk();
if (!canRun) console.warn('disk-read-only: skipped, this process cannot mount an ext4 image on a loop device (needs root and loop devices)');

const disks: FailingDisk[] = [];
afterEach(() => killAgents());
afterAll(() => {
  for (const d of disks.splice(0)) d.unmount();
});

/** Sends `ids` as streamed hub requests and resolves with their ends once every one has ended. */
async function serve(hub: RecordingHub, ids: string[]): Promise<Map<string, ReceivedEnd>> {
  const want = new Set(ids);
  const got = new Map<string, ReceivedEnd>();
  const all = new Promise<void>((resolve) => {
    const onEnd = (e: ReceivedEnd): void => {
      if (want.has(e.requestId)) got.set(e.requestId, e);
      if (got.size < want.size) return;
      hub.off('end', onEnd);
      resolve();
    };
    hub.on('end', onEnd);
  });
  ids.forEach((id, i) => hub.sendInference(id, MODEL, { messages: [{ role: 'user', content: `q${i}` }], max_tokens: 5 + (i % 20) }));
  await all;
  return got;
}

interface Row {
  request_id: string;
  tokens_in: number;
  tokens_out: number;
}

/** The ledger's rows of these ids, as another program reads the file. */
function rowsOf(home: string, prefix: string): Row[] {
  const db = new Database(path.join(home, 'ledger.sqlite'), { readonly: true, fileMustExist: true });
  try {
    return db.prepare(`SELECT request_id, tokens_in, tokens_out FROM usage WHERE request_id LIKE ? ORDER BY request_id`).all(`${prefix}%`) as Row[];
  } finally {
    db.close();
  }
}

/** Each id once, with the hub's token counts. */
function expectRows(rows: Row[], told: Map<string, ReceivedEnd>): void {
  expect(rows.map((r) => r.request_id).sort()).toEqual([...told.keys()].sort());
  for (const r of rows)
    expect({ id: r.request_id, in: r.tokens_in, out: r.tokens_out }).toEqual({
      id: r.request_id,
      in: told.get(r.request_id)!.tokensIn,
      out: told.get(r.request_id)!.tokensOut,
    });
}

/** The codes of the JSON log's lines, in order. */
function codesInLog(home: string): string[] {
  const text = fs.readFileSync(path.join(home, 'logs', 'agent.jsonl'), 'utf8');
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => (JSON.parse(l) as { code?: unknown }).code)
    .filter((c): c is string => typeof c === 'string');
}

describe.skipIf(!canRun)('a home disk that turns read-only while serving (ext4 errors=remount-ro)', () => {
  const rig = servingRig(MODEL);

  it('serves on; held rows are written once the disk is mounted again; a SIGTERM while read-only exits in seconds and counts the rows it could not write', async () => {
    const disk = mountFailingDisk(64);
    disks.push(disk);
    const home = disk.dir;
    const { hub } = rig;
    rig.configure(home);
    hub.reset();
    const agent = startAgent(home);
    await hub.waitForModel(MODEL, 60_000).catch((e: Error) => {
      throw new Error(`${e.message}\n${agent.output()}`);
    });
    const ids = (p: string): string[] => Array.from({ length: BURST }, (_, i) => `${p}${String(i).padStart(2, '0')}`);

    // A: the disk works.
    const a = await serve(hub, ids('ro-a-'));
    expectRows(rowsOf(home, 'ro-a-'), a);

    // B: the disk turns read-only under the running agent; every request is still served.
    disk.sync();
    disk.fail();
    expect(disk.readOnly()).toBe(true);
    const b = await serve(hub, ids('ro-b-'));
    expect([...b.values()].filter((e) => e.error)).toEqual([]);
    expect(agent.child.exitCode).toBeNull();

    // The disk is checked and mounted again: the held rows of B are written, once each.
    disk.repair();
    const t1 = Date.now();
    await until(() => rowsOf(home, 'ro-b-').length >= BURST, 'the held rows written after the disk came back', WRITTEN_WITHIN_MS).catch((e: Error) => {
      throw new Error(`${e.message}\n${agent.output()}`);
    });
    const writtenAfterMs = Date.now() - t1;
    expectRows(rowsOf(home, 'ro-a-'), a);
    expectRows(rowsOf(home, 'ro-b-'), b);

    // C: read-only again, and the agent is stopped before it comes back.
    disk.sync();
    disk.fail();
    expect(disk.readOnly()).toBe(true);
    const c = await serve(hub, ids('ro-c-'));
    expect([...c.values()].filter((e) => e.error)).toEqual([]);
    const t0 = Date.now();
    agent.child.kill('SIGTERM');
    const { code } = await agent.exited;
    const stopMs = Date.now() - t0;
    const out = agent.output();
    console.info(`disk-read-only: served ${a.size + b.size + c.size}, B written ${writtenAfterMs} ms after the disk came back, stop took ${stopMs} ms`);
    expect(stopMs).toBeLessThan(STOP_WITHIN_MS);
    expect(code, out).toBe(0);
    expect(out).not.toMatch(/uncaught exception|unhandled promise rejection/i);
    expect(out).not.toMatch(/\n\s+at /);
    // One line says how many rows of what the hub was told could not be written, with its code.
    const lost = [...out.matchAll(/\bledger_rows_lost\b\D*(\d+)/g)].map((m) => Number(m[1]));
    expect(lost, out).toEqual([c.size]);

    // The disk is mounted again; the agent starts and stops on it: A and B once each, C absent (counted above).
    disk.repair();
    hub.reset();
    const again = startAgent(home);
    await hub.waitForModel(MODEL, 60_000).catch((e: Error) => {
      throw new Error(`${e.message}\n${again.output()}`);
    });
    again.child.kill('SIGTERM');
    expect((await again.exited).code).toBe(0);
    expectRows(rowsOf(home, 'ro-a-'), a);
    expectRows(rowsOf(home, 'ro-b-'), b);
    expect(rowsOf(home, 'ro-c-')).toEqual([]);
    const db = new Database(path.join(home, 'ledger.sqlite'), { readonly: true });
    try {
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    } finally {
      db.close();
    }
  }, 240_000);

  it('the verdict says disk_read_only while the disk is read-only and no more once it is mounted again; the log says so once each way', async () => {
    const disk = mountFailingDisk(32);
    disks.push(disk);
    const { hub } = rig;
    const configPath = rig.configure(disk.dir);
    hub.reset();
    const log = new AgentLog({ file: path.join(disk.dir, 'logs', 'agent.jsonl'), console: false });
    const problems: Array<LogFileProblem | null> = [];
    log.on('file', (p: LogFileProblem | null) => problems.push(p));
    const agent = await Agent.create({ home: disk.dir, configPath, log, gpu: false, discovery: false, env: { PATH: process.env.PATH } });
    await agent.start();
    try {
      await hub.waitForModel(MODEL, 30_000);
      const diskCodes = (): string[] =>
        agent
          .snapshot()
          .verdict.reasons.map((r) => r.code)
          .filter((x) => x === 'disk_full' || x === 'disk_read_only');
      expect(diskCodes()).toEqual([]);
      await serve(hub, ['ro-v-0']);
      await log.flush();
      disk.sync();
      disk.fail();
      const held = await serve(hub, ['ro-v-1', 'ro-v-2']);
      await until(() => diskCodes().length > 0, 'the verdict to hear of the read-only disk', 10_000);
      expect(diskCodes()).toEqual(['disk_read_only']);
      expect(agent.snapshot().verdict.reasons.find((r) => r.code === 'disk_read_only')).toMatchObject({ state: 'degraded' });
      await until(() => log.fileProblem() !== null, 'the log file to fail', 10_000);
      expect(log.fileProblem()?.code).toBe('disk_read_only');

      disk.repair();
      await until(() => diskCodes().length === 0, 'the verdict to clear once the disk was mounted again', WRITTEN_WITHIN_MS);
      await until(() => log.fileProblem() === null, 'the log file written again', WRITTEN_WITHIN_MS);
      expect(problems.map((p) => p?.code ?? null)).toEqual(['disk_read_only', null]);
      expectRows(rowsOf(disk.dir, 'ro-v-1').concat(rowsOf(disk.dir, 'ro-v-2')), held);
      // The lines held while the disk refused them are in the file now: one coded line each way, from the
      // ledger (read-only at once, not a "disk I/O error" to check folders for) and from the log itself.
      await until(() => codesInLog(disk.dir).includes('log_file_ok'), 'the held lines written', 10_000);
      const codes = codesInLog(disk.dir).filter((x) => /^(ledger_|disk_|log_)/.test(x));
      expect(codes.sort()).toEqual(['disk_read_only', 'ledger_ok', 'ledger_read_only', 'log_file_ok']);
    } finally {
      await agent.stop();
      await log.close();
    }
  }, 120_000);
});
