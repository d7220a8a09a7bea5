// `swan-provider usage [summary]` and `swan-provider usage export --from --to --out`: read the
// ledger in the home folder. Safe while the agent runs (SQLite WAL: readers never block it).
import fs from 'node:fs';
import path from 'node:path';
import { finished } from 'node:stream/promises';
import type { EarningsOverview, ModelUsage } from '../shared/views/usage';
import { EarningsService } from '../core/accounting/earnings';
import { OwnerValues } from '../core/config/owner-values';
import { loadConfig } from '../core/config/config';
import { STATS_TTL_MS } from '../core/platform/stats';
import { memoryLog } from '../core/base/log';
import type { UsageTotals } from '../shared/types';
import { csvHeaderLine } from '../core/ledger/csv';
import { Ledger } from '../core/ledger/ledger';
import type { WritableLike } from '../core/ledger/write-stream';
import { DAY_MS, startOfLocalDay } from '../core/ledger/time-buckets';
import { railCostLine, railLine } from '../shared/rails-summary';
import { forTerminal, forTerminalLines, terminalWriter } from '../core/base/terminal';
import { FILE_MODE } from '../core/config/home';
import { Transform } from 'node:stream';
import { homePath } from '../core/config/home-layout';
import { fmtDateTime } from '../shared/dates';
import { CodedError } from '../shared/bridge-error';

export interface UsageCommandOptions {
  home: string;
  action: 'summary' | 'export';
  /** YYYY-MM-DD (local day, included) or an ISO 8601 time. */
  from?: string;
  to?: string;
  /** File for the CSV; stdout when absent. */
  out?: string;
  /** Where text goes (default process.stdout / process.stderr). */
  stdout?: NodeJS.WritableStream;
  stderr?: NodeJS.WritableStream;
}

/** The ledger file of an agent home folder. */
export function ledgerPath(home: string): string {
  return homePath(home, 'ledger');
}

/** Why a --from/--to value was refused: a day the calendar lacks (2025-02-30), not a date at all, or --to before --from. */
export type UsageArgErrorCode = 'no_such_date' | 'not_a_date' | 'range_reversed';

/** A --from/--to value that is not a date, or a range that ends before it starts; `field` is 'from' or 'to'. */
export class UsageArgError extends CodedError<UsageArgErrorCode> {
  override name = 'UsageArgError';
}

const DAY_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:?\d{2})?$/;

/**
 * A --from/--to value as epoch ms. A bare date means the local day: --from starts at its midnight,
 * --to includes the whole day (ends at the next midnight). An ISO time is taken as is.
 */
export function parseDateArg(value: string, edge: 'from' | 'to'): number {
  const v = value.trim();
  const day = DAY_RE.exec(v);
  if (day) {
    const [y, m, d] = [Number(day[1]), Number(day[2]), Number(day[3])];
    const date = new Date(y, m - 1, d);
    if (date.getFullYear() !== y || date.getMonth() !== m - 1 || date.getDate() !== d) {
      throw new UsageArgError('no_such_date', `--${edge} ${value}: there is no such date. Use YYYY-MM-DD, e.g. 2025-01-31.`, edge);
    }
    return edge === 'from' ? date.getTime() : new Date(y, m - 1, d + 1).getTime();
  }
  const t = ISO_RE.test(v) ? Date.parse(v) : NaN;
  if (!Number.isFinite(t))
    throw new UsageArgError('not_a_date', `--${edge} ${value}: not a date. Use YYYY-MM-DD or an ISO time such as 2025-01-31T18:00:00Z.`, edge);
  return t;
}

const COUNT = new Intl.NumberFormat('en-US');
function num(n: number): string {
  return COUNT.format(n);
}

function money(n: number): string {
  if (n === 0) return '0';
  return n >= 1 ? n.toFixed(2) : n.toFixed(6).replace(/0+$/, '');
}

function pct(part: number, whole: number): string {
  return whole === 0 ? '-' : `${((part / whole) * 100).toFixed(1)}%`;
}

function ms(v: number | null): string {
  return v === null ? '-' : `${Math.round(v)} ms`;
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')).join('\n');
}

function totalsRow(label: string, t: UsageTotals): string[] {
  const cost = t.cost ?? 0;
  return [
    label,
    num(t.requests),
    `${num(t.errors)} (${pct(t.errors, t.requests)})`,
    num(t.tokensIn),
    num(t.tokensOut),
    money(t.earnings),
    money(cost),
    money(t.earnings - cost),
  ];
}

function modelRow(m: ModelUsage): string[] {
  const cost = m.cost ?? 0;
  return [
    m.model,
    num(m.requests),
    pct(m.errors, m.requests),
    ms(m.p50LatencyMs),
    ms(m.p95LatencyMs),
    m.p50TokensPerSecond === null ? '-' : m.p50TokensPerSecond.toFixed(1),
    num(m.tokensOut),
    money(m.earnings),
    money(cost),
    money(m.earnings - cost),
  ];
}

function asOf(f: { asOf: number | null; stale: boolean; error?: string }): string {
  if (f.asOf === null) return f.error ? `unavailable (${f.error})` : 'not fetched yet';
  return `as of ${fmtDateTime(f.asOf)}${f.stale ? ' (stale)' : ''}`;
}

/** The same earnings figures as the console's Usage page, from the ledger and the agent's cached copies of the platform's answers. */
function earningsLines(o: EarningsOverview): string[] {
  const lines: string[] = ['', 'What you keep, last 24 hours:'];
  lines.push(
    `  earnings ${money(o.recent.earnings)} USD, power ${(o.recent.energyWh / 1000).toFixed(3)} kWh = ${o.electricity ? `${money(o.recent.cost)} USD` : 'no electricity price set'}, net ${money(o.recent.net)} USD`,
  );
  if (o.projection) {
    lines.push(`  at the last 24 h rate: ${money(o.projection.perDay)} USD/day, ${money(o.projection.perMonth)} USD/month (net)`);
    for (const a of o.projection.assumptions) lines.push(`    - ${a}`);
  } else if (o.projectionUnavailable) lines.push(`  ${o.projectionUnavailable}`);
  lines.push('', `The platform's record (${asOf(o.platform)}) beside this ledger, all time, hub requests:`);
  const p = o.platform.value;
  const d = o.difference;
  lines.push(
    table([
      ['', 'platform', 'this ledger', 'difference'],
      ['requests', p ? num(p.totalInferences) : '-', num(o.local.requests), d ? num(d.requests) : '-'],
      ['failed', p ? num(p.failedInferences) : '-', num(o.local.failed), p ? num(p.failedInferences - o.local.failed) : '-'],
      ['tokens', p ? num(p.totalTokens) : '-', num(o.local.tokensIn + o.local.tokensOut), d ? num(d.tokens) : '-'],
      ['earnings (USD)', p ? money(p.totalEarningsUsd) : '-', money(o.local.earnings), d ? money(d.earningsUsd) : '-'],
    ]),
  );
  if (p) lines.push(`Uptime over 7 days (the platform's figure): ${p.uptime7dPercent.toFixed(1)}%`);
  for (const r of o.reasons) lines.push(`  - ${r.text}`);
  if (o.pricing.length > 0) {
    lines.push('', `Rates (network rates ${asOf(o.rates)}), USD per 1M tokens:`);
    lines.push(
      table([
        ['model', 'rate', 'in', 'out'],
        ...o.pricing.map((r) => [
          r.model,
          r.source === 'network' ? 'network' : r.source === 'override' ? 'your estimate' : 'not priced',
          r.inputPerM === null ? '-' : String(r.inputPerM),
          r.outputPerM === null ? '-' : String(r.outputPerM),
        ]),
      ]),
    );
  }
  return lines;
}

/** Where this home's agent asks the platform, with which key ('' when there is no config or key). */
function platformAccess(home: string): { serviceUrl: string; key: string } {
  const configFile = homePath(home, 'config');
  if (!fs.existsSync(configFile)) return { serviceUrl: '', key: '' };
  try {
    const values = OwnerValues.ofHome(home, loadConfig(configFile, process.env), process.env);
    // A key held for an address the owner has not approved is not sent from here either.
    return { serviceUrl: values.serviceUrl(), key: values.providerKey() };
  } catch {
    return { serviceUrl: '', key: '' };
  }
}

async function summary(ledger: Ledger, file: string, home: string, out: NodeJS.WritableStream): Promise<void> {
  const now = Date.now();
  const month = ledger.report(now - 30 * DAY_MS, now + 1, 'day');
  const lines = [
    `Usage and earnings (${file})`,
    '',
    table([
      ['', 'requests', 'errors', 'tokens in', 'tokens out', 'earnings', 'power cost', 'net'],
      totalsRow('Today', ledger.today()),
      totalsRow('Last 7 days', ledger.last(7)),
      totalsRow('Last 30 days', month.totals),
    ]),
    '',
  ];
  // The rails' time today, from their decisions in the ledger (rail_events), with the line's code.
  const railDay = ledger.railSummaryWithCost(startOfLocalDay(now), now + 1);
  const rails = railLine(railDay, 'today');
  lines.push(`${rails.text} [${rails.code}]`);
  const cost = railCostLine(railDay, money);
  if (cost) lines.push(`${cost.text} [${cost.code}]`);
  lines.push('');
  if (month.perModel.length === 0) lines.push('No requests in the last 30 days.');
  else {
    lines.push(`Per model, last 30 days (error rate ${pct(month.totals.errors, month.totals.requests)}; latency and speed of successful requests):`);
    lines.push(
      table([
        ['model', 'requests', 'errors', 'p50 latency', 'p95 latency', 'p50 tok/s', 'tokens out', 'earnings', 'power cost', 'net'],
        ...month.perModel.map(modelRow),
      ]),
    );
  }
  const access = platformAccess(home);
  const earnings = new EarningsService({
    home,
    ledger,
    log: memoryLog().child('earnings'),
    serviceUrl: () => access.serviceUrl,
    providerKey: () => access.key,
    models: () => month.perModel.map((m) => m.model),
  });
  // A running agent keeps the platform's copies fresh (every 2 minutes); when they are missing or older
  // than that (no agent running), `usage` asks the platform itself, as the agent would.
  const saved = earnings.stats.view();
  const fresh = saved.asOf !== null && now - saved.asOf < 2 * STATS_TTL_MS;
  lines.push(...earningsLines(await earnings.overview(false, fresh || !access.serviceUrl || !access.key)));
  if (!ledger.isEarningsEnabled()) lines.push('', 'Earnings are off for this provider (the hub reports earnings_enabled = false).');
  out.write(forTerminal(`${lines.join('\n')}\n`));
}

function exportRange(opts: UsageCommandOptions): { from: number; to: number } {
  const from = opts.from ? parseDateArg(opts.from, 'from') : 0;
  const to = opts.to ? parseDateArg(opts.to, 'to') : Date.now() + 1;
  if (to < from) throw new UsageArgError('range_reversed', `--to (${fmtDateTime(to)}) is before --from (${fmtDateTime(from)}).`, 'to');
  return { from, to };
}

/**
 * Runs `write` against stdout, or a file that is fully written and closed before this returns. Request ids
 * and model names come from the hub and engines: on stdout (a terminal, as often as not) escape sequences
 * and other control characters are removed; the file is the owner's own, 0600 like everything of the agent.
 */
async function toTarget(opts: UsageCommandOptions, out: NodeJS.WritableStream, write: (s: NodeJS.WritableStream) => Promise<number>): Promise<number> {
  if (!opts.out) {
    const clean = new Transform({ transform: (chunk: Buffer, _enc, done) => done(null, forTerminalLines(chunk.toString('utf8'))) });
    clean.pipe(out, { end: false });
    const n = await write(clean);
    clean.end();
    await finished(clean);
    return n;
  }
  const target = path.resolve(opts.out);
  const file = fs.createWriteStream(target, { mode: FILE_MODE });
  await new Promise<void>((resolve, reject) => {
    file.once('open', (fd: number) => {
      // An existing file keeps its mode when opened: made private before anything is written to it.
      if (process.platform !== 'win32') fs.fchmodSync(fd, FILE_MODE);
      resolve();
    });
    file.once('error', reject);
  });
  const n = await write(file);
  file.end();
  await finished(file);
  out.write(`Wrote ${num(n)} records to ${target}.\n`);
  return n;
}

/** Exit codes: 0 done, 1 the ledger or the output could not be used, 2 bad arguments. */
export async function usageCommand(opts: UsageCommandOptions): Promise<number> {
  const out = opts.stdout ?? process.stdout;
  const err = terminalWriter(opts.stderr ?? process.stderr);
  const file = ledgerPath(opts.home);
  let ledger: Ledger | undefined;
  try {
    const range = opts.action === 'export' ? exportRange(opts) : undefined;
    if (!fs.existsSync(file)) {
      err.write(`No usage recorded yet: there is no ledger at ${file}. It is created when the agent starts (check --home if you expected one).\n`);
      if (range) {
        await toTarget(opts, out, async (s) => {
          s.write(csvHeaderLine());
          return 0;
        });
      }
      return 0;
    }
    ledger = Ledger.open(file);
    const h = ledger.health();
    if (!h.ok) {
      err.write(`${h.error ?? `The usage database ${file} could not be opened.`}\n`);
      return 1;
    }
    if (!range) {
      await summary(ledger, file, opts.home, out);
      return 0;
    }
    const open = ledger;
    const n = await toTarget(opts, out, (s) => open.exportCsvTo(s as WritableLike, range.from, range.to));
    if (!opts.out) err.write(`Exported ${num(n)} records.\n`);
    return 0;
  } catch (e) {
    err.write(`${e instanceof Error ? e.message : String(e)}\n`);
    return e instanceof UsageArgError ? 2 : 1;
  } finally {
    ledger?.close();
  }
}
