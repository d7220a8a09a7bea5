// Ledger bench: insert throughput and the time of each UI query on a year of synthetic usage, and the
// two figures the summaries are for beside the scans they replaced, in the same run on the same file:
// the 365-day report (target under 100 ms) and a 30-day CSV stream (target 200,000 rows/s or more).
// The scans are kept here only (scanPerModel, scanCsvTo), as the code read before schema v6.
// Run: npx tsx bench/ledger.ts [rows]   (default 1,000,000; about a minute on a small VM)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import type { UsageRecord } from '../src/shared/types';
import Database from 'better-sqlite3';
import type { ModelUsage, UsageReport } from '../src/shared/views/usage';
import { Ledger } from '../src/core/ledger/ledger';
import { CSV_SELECT, csvHeaderLine, csvLine, csvRowOf, type CsvRaw } from '../src/core/ledger/csv';
import { percentileOfSorted } from '../src/core/ledger/percentile';
import { UsageQueries } from '../src/core/ledger/queries';
import { DAY_MS, type BucketSize } from '../src/core/ledger/time-buckets';
import { waitForDrain, type WritableLike } from '../src/core/ledger/write-stream';
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

/** Both clocks at once: wall time, and this process's own CPU time (user + system), which other
 * processes' load on a shared machine does not enter (I/O waits do not either). */
interface Stamp {
  wall: number;
  cpu: number;
}
function stamp(): Stamp {
  const u = process.cpuUsage();
  return { wall: performance.now(), cpu: (u.user + u.system) / 1000 };
}
function since(t0: Stamp): Stamp {
  const t = stamp();
  return { wall: t.wall - t0.wall, cpu: t.cpu - t0.cpu };
}
const round1 = (x: number): number => Math.round(x * 10) / 10;
function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** Median of `runs` for each clock: figure `name` is wall ms, `name` with Cpu before Ms is CPU ms. */
function timeIt(out: Record<string, number>, name: string, fn: () => unknown, runs = 3): void {
  const times: Stamp[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = stamp();
    fn();
    times.push(since(t0));
  }
  out[name] = round1(median(times.map((t) => t.wall)));
  out[name.replace(/Ms$/, 'CpuMs')] = round1(median(times.map((t) => t.cpu)));
}

async function timeAsync(out: Record<string, number>, name: string, fn: () => Promise<unknown>): Promise<void> {
  const t0 = stamp();
  await fn();
  const t = since(t0);
  out[name] = round1(t.wall);
  out[name.replace(/Ms$/, 'CpuMs')] = round1(t.cpu);
}

// ---- the scans the summaries replaced (before schema v6), for the side-by-side figures ----

/** Per-model percentiles from every successful row's values (1-in-k above 100,000 a model), as before v6. */
function scanPerModel(db: Database.Database, q: UsageQueries, from: number, to: number): ModelUsage[] {
  const lat = db
    .prepare(
      "SELECT latency_ms FROM usage INDEXED BY usage_model_perf WHERE model = ? AND status = 'ok' AND finished_at >= ? AND finished_at < ? AND id % ? = 0",
    )
    .pluck();
  const tps = db
    .prepare(
      "SELECT tokens_per_second FROM usage INDEXED BY usage_model_perf WHERE model = ? AND status = 'ok' AND finished_at >= ? AND finished_at < ? AND id % ? = 0 AND tokens_per_second IS NOT NULL",
    )
    .pluck();
  const out: ModelUsage[] = [];
  for (const [model, t] of q.modelSums(from, to)) {
    const stride = Math.max(1, Math.ceil((t.requests - t.errors) / 100_000));
    const l = Float64Array.from(lat.all(model, from, to, stride) as number[]).sort();
    const s = Float64Array.from(tps.all(model, from, to, stride) as number[]).sort();
    out.push({
      model,
      ...t,
      p50LatencyMs: percentileOfSorted(l, 0.5),
      p95LatencyMs: percentileOfSorted(l, 0.95),
      p50TokensPerSecond: percentileOfSorted(s, 0.5),
    });
  }
  return out;
}

function scanReport(db: Database.Database, q: UsageQueries, from: number, to: number, size: BucketSize): UsageReport {
  const totals = q.totals(from, to);
  return {
    from,
    to,
    totals,
    buckets: q.buckets(from, to, size),
    perModel: scanPerModel(db, q, from, to),
    errorRate: totals.requests === 0 ? 0 : totals.errors / totals.requests,
  };
}

/** The CSV made from the rows at export time, page by page (22 columns read and formatted a row), as before v6. */
async function scanCsvTo(db: Database.Database, stream: WritableLike, from: number, to: number): Promise<number> {
  const first = db.prepare(`${CSV_SELECT} WHERE u.finished_at >= ? AND u.finished_at < ? ORDER BY u.finished_at, u.id LIMIT 5000`).raw(true);
  const next = db
    .prepare(`${CSV_SELECT} WHERE u.finished_at >= ? AND u.finished_at < ? AND (u.finished_at > ? OR u.id > ?) ORDER BY u.finished_at, u.id LIMIT 5000`)
    .raw(true);
  let rows = 0;
  if (!stream.write(csvHeaderLine())) await waitForDrain(stream);
  for (let page = first.all(from, to) as CsvRaw[]; ;) {
    if (page.length > 0 && !stream.write(page.map((r) => csvLine(csvRowOf(r))).join(''))) await waitForDrain(stream);
    rows += page.length;
    if (page.length < 5000) return rows;
    const last = page[page.length - 1]!;
    page = next.all(Math.max(from, last[6]), to, last[6], last[0]) as CsvRaw[];
  }
}

/** A stream that takes everything and counts its bytes. */
function sink(): { stream: Writable; bytes: () => number } {
  let bytes = 0;
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      bytes += chunk.length;
      cb();
    },
  });
  return { stream, bytes: () => bytes };
}

/** Figures are rows/s for inserts and milliseconds (median of 3) for queries, each by the wall clock
 * and (the figures named …Cpu…) by this process's CPU time. */
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
    let t0 = stamp();
    for (let i = 0; i < rows; i += batchSize) {
      const batch: UsageRecord[] = [];
      for (let j = i; j < Math.min(rows, i + batchSize); j++) batch.push(synthetic(j, Math.floor(start + j * step), rand));
      ledger.recordBatch(batch);
    }
    const batched = since(t0);
    out.insertBatchedRowsPerSec = Math.round(rows / (batched.wall / 1000));
    out.insertBatchedCpuRowsPerSec = Math.round(rows / (batched.cpu / 1000));

    // Single: one record() per finished request, each its own fsynced commit, on the full database.
    const single = 2000;
    t0 = stamp();
    for (let i = 0; i < single; i++) ledger.record(synthetic(rows + i, now - single + i, rand));
    const singleT = since(t0);
    out.insertSingleRowsPerSec = Math.round(single / (singleT.wall / 1000));
    out.insertSingleCpuRowsPerSec = Math.round(single / (singleT.cpu / 1000));
    out.insertSingleMeanMs = Math.round((singleT.wall * 1000) / single) / 1000;
    const h = ledger.health();
    if (!h.ok || h.pending > 0) throw new Error(`bench ledger unhealthy: ${JSON.stringify(h)}`);

    const end = now + 1;
    timeIt(out, 'todayTotalsMs', () => ledger.today());
    timeIt(out, 'last7TotalsMs', () => ledger.last(7));
    timeIt(out, 'last30TotalsMs', () => ledger.last(30));
    timeIt(out, 'last365TotalsMs', () => ledger.last(365));
    timeIt(out, 'report1d15mMs', () => ledger.report(end - DAY_MS, end, '15m'));
    timeIt(out, 'report7dHourMs', () => ledger.report(end - 7 * DAY_MS, end, 'hour'));
    timeIt(out, 'report30d15mMs', () => ledger.report(end - 30 * DAY_MS, end, '15m'));
    timeIt(out, 'report30dDayMs', () => ledger.report(end - 30 * DAY_MS, end, 'day'));
    timeIt(out, 'report365dDayMs', () => ledger.report(end - 365 * DAY_MS, end, 'day'));
    timeIt(out, 'topModels30dMs', () => ledger.topModels(end - 30 * DAY_MS, end, 5));
    timeIt(out, 'recent100Ms', () => ledger.recent(100));
    timeIt(out, 'exportCsv1dMs', () => ledger.exportCsv(end - DAY_MS, end));
    const csv = sink();
    let csvRows = 0;
    await timeAsync(out, 'exportCsvTo30dMs', async () => (csvRows = await ledger.exportCsvTo(csv.stream, end - 30 * DAY_MS, end)));
    out.exportCsvTo30dMB = Math.round(csv.bytes() / 1e5) / 10;
    out.exportCsvTo30dRows = csvRows;

    // Side by side, same file, same run: the scans the summaries replaced.
    const db = new Database(path.join(dir, 'ledger.sqlite'), { readonly: true });
    try {
      const q = new UsageQueries(db);
      timeIt(out, 'scanReport365dDayMs', () => scanReport(db, q, end - 365 * DAY_MS, end, 'day'));
      timeIt(out, 'report365dDayAgainMs', () => ledger.report(end - 365 * DAY_MS, end, 'day'));
      const old = sink();
      await timeAsync(out, 'scanCsvTo30dMs', () => scanCsvTo(db, old.stream, end - 30 * DAY_MS, end));
      if (old.bytes() !== csv.bytes()) throw new Error(`the two CSV paths differ: ${old.bytes()} bytes against ${csv.bytes()}`);
    } finally {
      db.close();
    }
    out.exportCsvTo30dRowsPerSec = Math.round(csvRows / (out.exportCsvTo30dMs! / 1000));
    out.exportCsvTo30dCpuRowsPerSec = Math.round(csvRows / (out.exportCsvTo30dCpuMs! / 1000));
    out.scanCsvTo30dRowsPerSec = Math.round(csvRows / (out.scanCsvTo30dMs! / 1000));
    out.scanCsvTo30dCpuRowsPerSec = Math.round(csvRows / (out.scanCsvTo30dCpuMs! / 1000));
    out.report365dSpeedup = Math.round((out.scanReport365dDayCpuMs! / out.report365dDayAgainCpuMs!) * 10) / 10;
    out.csv30dSpeedup = Math.round((out.scanCsvTo30dCpuMs! / out.exportCsvTo30dCpuMs!) * 10) / 10;
    t0 = stamp();
    out.prune30dRows = ledger.prune(335);
    const pruneT = since(t0);
    out.prune30dMs = Math.round(pruneT.wall);
    out.prune30dCpuMs = Math.round(pruneT.cpu);
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
