// Ledger bench: insert throughput and the time of each UI query on a year of synthetic usage.
// Run: npx tsx bench/ledger.ts [rows]   (default 1,000,000; about 30-40 s on a small VM)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import type { UsageRecord } from '../src/shared/types';
import { Ledger } from '../src/core/ledger/ledger';
import { DAY_MS } from '../src/core/ledger/time-buckets';
import { mulberry32 } from '../test/support/rng';

const MODELS = ['llama-3.1-8b-instruct', 'qwen2.5-7b-instruct', 'mistral-7b-instruct', 'gemma-2-9b-it', 'phi-3.5-mini', 'deepseek-r1-distill-14b'];

function synthetic(i: number, finishedAt: number, rand: () => number): UsageRecord {
  const model = MODELS[Math.floor(rand() * rand() * MODELS.length)]!;
  const roll = rand();
  const status = roll < 0.02 ? 'error' : roll < 0.025 ? 'cancelled' : 'ok';
  const tokensOut = Math.floor(20 + rand() * 800);
  const latencyMs = Math.round(200 + tokensOut * (15 + rand() * 30));
  return {
    requestId: `req-${i}`,
    source: rand() < 0.8 ? 'hub' : 'local',
    model,
    endpoint: 'http://127.0.0.1:8000',
    startedAt: finishedAt - latencyMs,
    finishedAt,
    tokensIn: Math.floor(50 + rand() * 2000),
    tokensOut,
    estimated: rand() < 0.05,
    latencyMs,
    ttftMs: Math.round(50 + rand() * 400),
    tokensPerSecond: Math.round((tokensOut / (latencyMs / 1000)) * 100) / 100,
    status,
    statusCode: status === 'error' ? 502 : 200,
    error: status === 'error' ? 'engine closed the stream' : null,
  };
}

function timeIt(fn: () => unknown, runs = 3): number {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    fn();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return Math.round(times[Math.floor(runs / 2)]! * 10) / 10;
}

async function timeAsync(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return Math.round((performance.now() - t0) * 10) / 10;
}

/** Figures are rows/s for inserts and milliseconds (median of 3) for queries. */
export async function benchLedger(rows = 1_000_000): Promise<Record<string, number>> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-ledger-bench-'));
  const out: Record<string, number> = { rows };
  const ledger = Ledger.open(path.join(dir, 'ledger.sqlite'));
  try {
    ledger.setPrice('*', 0.1, 0.3, 0);
    ledger.setPrice(MODELS[0]!, 0.05, 0.15, 0);
    const rand = mulberry32(42);
    const now = Date.now();
    const start = now - 365 * DAY_MS;
    const step = (365 * DAY_MS) / rows;

    // Batched: what an import or a flush after an outage does (10,000 records per transaction).
    const batchSize = 10_000;
    let t0 = performance.now();
    for (let i = 0; i < rows; i += batchSize) {
      const batch: UsageRecord[] = [];
      for (let j = i; j < Math.min(rows, i + batchSize); j++) batch.push(synthetic(j, Math.floor(start + j * step), rand));
      ledger.recordBatch(batch);
    }
    out.insertBatchedRowsPerSec = Math.round(rows / ((performance.now() - t0) / 1000));

    // Single: one record() per finished request, each its own fsynced commit, on the full database.
    const single = 2000;
    t0 = performance.now();
    for (let i = 0; i < single; i++) ledger.record(synthetic(rows + i, now - single + i, rand));
    const singleSec = (performance.now() - t0) / 1000;
    out.insertSingleRowsPerSec = Math.round(single / singleSec);
    out.insertSingleMeanMs = Math.round((singleSec * 1000 * 1000) / single) / 1000;
    const h = ledger.health();
    if (!h.ok || h.pending > 0) throw new Error(`bench ledger unhealthy: ${JSON.stringify(h)}`);

    const end = now + 1;
    out.todayTotalsMs = timeIt(() => ledger.today());
    out.last7TotalsMs = timeIt(() => ledger.last(7));
    out.last30TotalsMs = timeIt(() => ledger.last(30));
    out.last365TotalsMs = timeIt(() => ledger.last(365));
    out.report1d15mMs = timeIt(() => ledger.report(end - DAY_MS, end, '15m'));
    out.report7dHourMs = timeIt(() => ledger.report(end - 7 * DAY_MS, end, 'hour'));
    out.report30d15mMs = timeIt(() => ledger.report(end - 30 * DAY_MS, end, '15m'));
    out.report30dDayMs = timeIt(() => ledger.report(end - 30 * DAY_MS, end, 'day'));
    out.report365dDayMs = timeIt(() => ledger.report(end - 365 * DAY_MS, end, 'day'));
    out.topModels30dMs = timeIt(() => ledger.topModels(end - 30 * DAY_MS, end, 5));
    out.recent100Ms = timeIt(() => ledger.recent(100));
    out.exportCsv1dMs = timeIt(() => ledger.exportCsv(end - DAY_MS, end));
    let bytes = 0;
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        bytes += chunk.length;
        cb();
      },
    });
    out.exportCsvTo30dMs = await timeAsync(() => ledger.exportCsvTo(sink, end - 30 * DAY_MS, end));
    out.exportCsvTo30dMB = Math.round(bytes / 1e5) / 10;
    t0 = performance.now();
    out.prune30dRows = ledger.prune(335);
    out.prune30dMs = Math.round(performance.now() - t0);
    out.dbFileMB = Math.round(fs.statSync(path.join(dir, 'ledger.sqlite')).size / 1e5) / 10;
    return out;
  } finally {
    ledger.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const rows = process.argv[2] ? Number(process.argv[2]) : undefined;
  const figures = await benchLedger(rows);
  for (const [k, v] of Object.entries(figures)) console.log(`${k.padEnd(26)} ${v}`);
}
