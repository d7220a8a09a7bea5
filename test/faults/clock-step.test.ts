// Fault: the wall clock steps while the agent serves (NTP, a suspend and resume, a manual change). The agent
// runs as users run it (bin/swan-provider.js run) under libfaketime, its wall clock stepped an hour back and
// then two hours forward, each while streams are in flight. Every request straddling a step keeps a true
// latency in its stream_end and its ledger row (none refused, none an hour long), the heartbeat's rolling
// figures stay what the traffic was, and each step is logged once (code wall_clock_step).
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { startDevHub, type DevHub } from '../../src/cli/dev-hub';
import { startTestEngine, type TestEngine } from '../support/engine-server';
import { CliProcess } from '../support/cli/cli';
import { TEST_KEY, tempHome, until } from '../support/stack';
import { writeConfigToml } from '../support/config-toml';
import { LIBFAKETIME, SteppedClock } from '../support/faults/faketime';
import { report, streamChat } from '../support/faults/faults';
import { generatedText } from '../support/traces';

const MODEL = 'clock/steady';
/** 60 tokens at 25 ms each: a stream of about 1.5 s, so a step lands inside it. */
const TOKENS = 60;

interface Heartbeat {
  requests_per_minute: number;
  tokens_per_second: number;
  avg_latency_ms: number;
}

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup.length = 0;
});

describe.skipIf(!LIBFAKETIME)(LIBFAKETIME ? 'wall-clock steps' : 'wall-clock steps — skipped: libfaketime is absent (apt-get install faketime)', () => {
  it('stepped back an hour and forward two while streams run: true latencies, every row stored, heartbeat figures unchanged, each step logged once', async () => {
    const hub: DevHub = await startDevHub({ token: TEST_KEY });
    cleanup.push(() => hub.close());
    const engine: TestEngine = await startTestEngine({ models: [MODEL], mode: { generate: 100_000, delayMs: 25 } });
    cleanup.push(() => engine.close());
    const home = tempHome('swan-clock-');
    cleanup.push(() => fs.rmSync(home, { recursive: true, force: true }));
    fs.writeFileSync(path.join(home, 'models.json'), JSON.stringify({ [MODEL]: { endpoint: engine.url } }));
    const configPath = writeConfigToml(home, {
      API: { NodeName: 'clock-step' },
      Inference: { WebSocketURL: hub.wsUrl, ServiceURL: hub.url, ApiKey: TEST_KEY },
      // Pings and reads far apart: the link's own timers run on the monotonic clock, but keep them out of the way.
      Agent: { HeartbeatIntervalSeconds: 0.5, HealthCheckIntervalSeconds: 5, Discovery: false, DeepHealthCheckEvery: 0 },
    });
    const clock = new SteppedClock(home);
    const agent = CliProcess.start(['run', '--home', home, '--config', configPath, '--no-discovery', '--quiet'], { HOME: home, ...clock.env() });
    cleanup.push(() => agent.stop());
    const beats: Heartbeat[] = [];
    hub.events.on('heartbeat', (_p: unknown, payload: { metrics?: Heartbeat }) => {
      if (payload.metrics) beats.push(payload.metrics);
    });
    await until(() => hub.providers().some((p) => p.connected && p.models.includes(MODEL)), 'the agent registered', 60_000);

    /** Three streams at once, the clock stepped to `offsetS` once they are under way. */
    const straddle = async (offsetS: number): Promise<void> => {
      const before = engine.requests.filter((q) => q.method === 'POST').length;
      const streams = [0, 1, 2].map(() => streamChat(hub, MODEL, TOKENS));
      await until(() => engine.requests.filter((q) => q.method === 'POST' && q.eventsWritten > 5).length >= before + 3, 'three streams under way', 20_000);
      clock.set(offsetS);
      const done = await Promise.all(streams);
      for (const o of done) expect(o.text).toBe(generatedText(TOKENS));
    };
    await straddle(-3600);
    await straddle(+3600);
    // Heartbeats after the second step have seen every request.
    const seen = beats.length;
    await until(() => beats.length >= seen + 2, 'two heartbeats after the steps', 10_000);
    const after = beats.slice(seen);
    await agent.stop();

    const ends = hub.received.filter((m) => m.type === 'stream_end');
    const latencies = ends.map((m) => Number(m.payload.latency_ms));
    const db = new Database(path.join(home, 'ledger.sqlite'), { readonly: true });
    const rows = db.prepare('SELECT request_id, latency_ms, started_at, finished_at FROM usage WHERE source = ?').all('hub') as Array<{
      request_id: string;
      latency_ms: number;
      started_at: number;
      finished_at: number;
    }>;
    db.close();
    const logLines = fs
      .readFileSync(path.join(home, 'logs', 'agent.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.includes('"wall_clock_step"'));
    report(
      'wall-clock-step',
      { injected: 2, recovered: rows.length === 6 ? 2 : 0, lost: 6 - rows.length, duplicated: 0 },
      { latencies, rows: rows.length, after },
    );

    expect(ends).toHaveLength(6);
    for (const ms of latencies) {
      expect(ms).toBeGreaterThan(0);
      expect(ms).toBeLessThan(20_000);
    }
    // Every request has its row (none refused for a negative latency), each row whole.
    expect(new Set(rows.map((r) => r.request_id))).toEqual(new Set(ends.map((m) => m.requestId)));
    for (const r of rows) {
      expect(r.latency_ms).toBeGreaterThan(0);
      expect(r.latency_ms).toBeLessThan(20_000);
      expect(r.finished_at - r.started_at).toBe(r.latency_ms);
    }
    // The heartbeat's rolling window: 6 requests in the last minute at most, true latencies.
    for (const b of after) {
      expect(b.requests_per_minute).toBeLessThanOrEqual(6 * 60);
      expect(b.avg_latency_ms).toBeGreaterThanOrEqual(0);
      expect(b.avg_latency_ms).toBeLessThan(20_000);
      expect(b.tokens_per_second).toBeLessThan(1000);
    }
    expect(logLines.map((l) => (JSON.parse(l) as { stepMs: number }).stepMs > 0)).toEqual([false, true]);
  }, 120_000);
});
