// The agent (its real CLI, as a child process) is SIGKILLed at many points of a burst of streamed hub
// requests: right after the 1st, a middle and the last stream_end reached the hub, and at timed
// points in between (landing among ledger transactions). Afterwards, against what the hub stand-in
// received: every request whose stream_end the hub saw is in the ledger with the hub's token counts,
// and no row is marked delivered that the hub did not see end. The file passes integrity_check.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RecordingHub, type ReceivedEnd } from '../../support/recording-hub';
import { startTestEngine, type TestEngine } from '../../support/engine-server';
import { TEST_KEY, tempHome } from '../../support/stack';
import { writeConfigToml } from '../../support/config-toml';
import { startAgent } from '../../support/cli/agent-child';

const MODEL = 'crash-model';
const BURST = 30;

let engine: TestEngine;
let hub: RecordingHub;
let home: string;

beforeAll(async () => {
  engine = await startTestEngine({ models: [MODEL], mode: { generate: 400, delayMs: 3 }, promptTokens: 11 });
  hub = await RecordingHub.start();
  home = tempHome('swan-agent-crash-');
  fs.writeFileSync(path.join(home, 'models.json'), JSON.stringify({ [MODEL]: { endpoint: engine.url } }));
  writeConfigToml(home, {
    Inference: { Enable: true, WebSocketURL: hub.wsUrl, ServiceURL: 'http://127.0.0.1:9', ApiKey: TEST_KEY },
    Agent: { Discovery: false, HealthCheckIntervalSeconds: 0.1, MaxConcurrentPerEndpoint: 12 },
  });
});

afterAll(async () => {
  await hub?.close();
  await engine?.close();
  fs.rmSync(home, { recursive: true, force: true });
});

interface Row {
  request_id: string;
  tokens_in: number;
  tokens_out: number;
  status: string;
  delivered: number;
}

/** One burst; SIGKILL when `kill` says so. Returns what the hub saw end and what the ledger holds. */
async function burstAndKill(run: number, kill: { afterEnds: number } | { afterMs: number }): Promise<{ ends: ReceivedEnd[]; rows: Map<string, Row> }> {
  hub.reset();
  const agent = startAgent(home);
  try {
    await hub.waitForModel(MODEL, 30_000);
  } catch (e) {
    agent.child.kill('SIGKILL');
    throw new Error(`${(e as Error).message}\n${agent.output()}`);
  }
  const ids = Array.from({ length: BURST }, (_, i) => `run${run}-req${i}`);
  const killed = new Promise<void>((resolve) => {
    const doKill = (): void => {
      agent.child.kill('SIGKILL');
      resolve();
    };
    if ('afterEnds' in kill) {
      const onEnd = (): void => {
        if (hub.ends.length >= kill.afterEnds) {
          hub.off('end', onEnd);
          doKill(); // synchronously on receipt: the agent is still mid-burst
        }
      };
      hub.on('end', onEnd);
    } else {
      hub.once('end', () => setTimeout(doKill, kill.afterMs));
    }
  });
  // Output lengths differ per request, so every row's counts are distinct from its neighbours'.
  ids.forEach((id, i) => hub.sendInference(id, MODEL, { messages: [{ role: 'user', content: `q${i}` }], max_tokens: 20 + ((i * 7) % 60) }));
  await killed;
  expect((await agent.exited).signal).toBe('SIGKILL');
  await hub.waitClosed(); // everything the agent handed to its socket before dying has arrived
  const db = new Database(path.join(home, 'ledger.sqlite'), { readonly: true });
  try {
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    const rows = db.prepare(`SELECT request_id, tokens_in, tokens_out, status, delivered FROM usage WHERE request_id LIKE 'run${run}-%'`).all() as Row[];
    return { ends: hub.ends.filter((e) => e.requestId.startsWith(`run${run}-`)), rows: new Map(rows.map((r) => [r.request_id, r])) };
  } finally {
    db.close();
  }
}

describe('SIGKILL of the agent mid-burst', () => {
  const points: Array<{ afterEnds: number } | { afterMs: number }> = [
    { afterEnds: 1 },
    { afterEnds: 12 },
    { afterEnds: BURST }, // right after the last stream_end left (the reported loss: 29 of 30 rows)
    { afterMs: 40 },
    { afterMs: 170 },
  ];
  it('every request the hub saw end is in the ledger with its token counts; none it did not see is marked delivered', async () => {
    let sawEnds = 0;
    for (const [run, point] of points.entries()) {
      const { ends, rows } = await burstAndKill(run, point);
      if ('afterEnds' in point) expect(ends.length).toBeGreaterThanOrEqual(point.afterEnds);
      sawEnds += ends.length;
      const missing: string[] = [];
      for (const e of ends) {
        const row = rows.get(e.requestId);
        if (!row) {
          missing.push(e.requestId);
          continue;
        }
        expect({ id: e.requestId, in: row.tokens_in, out: row.tokens_out, status: row.status }).toEqual({
          id: e.requestId,
          in: e.tokensIn,
          out: e.tokensOut,
          status: e.error ? row.status : 'ok',
        });
      }
      expect(missing, `run ${run}: rows missing for requests the hub saw end`).toEqual([]);
      const seen = new Set(ends.map((e) => e.requestId));
      const deliveredUnseen = [...rows.values()].filter((r) => r.delivered === 1 && !seen.has(r.request_id)).map((r) => r.request_id);
      expect(deliveredUnseen, `run ${run}: rows marked delivered that the hub never saw end`).toEqual([]);
    }
    expect(sawEnds).toBeGreaterThan(BURST); // the kills landed at different depths of the bursts
  }, 180_000);
});
