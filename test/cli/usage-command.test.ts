import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ledgerPath, parseDateArg, usageCommand } from '../../src/cli/usage-command';
import { Ledger } from '../../src/core/ledger/ledger';
import { parseCsv, rec, tempDir } from '../support/ledger/helpers';

let home: string;
let cleanup: () => void;
beforeEach(() => ({ dir: home, cleanup } = tempDir()));
afterEach(() => cleanup());

function capture(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (c: Buffer) => (text += c.toString('utf8')));
  return { stream, text: () => text };
}

async function run(opts: Omit<Parameters<typeof usageCommand>[0], 'home' | 'stdout' | 'stderr'>): Promise<{ code: number; out: string; err: string }> {
  const out = capture();
  const err = capture();
  const code = await usageCommand({ home, ...opts, stdout: out.stream, stderr: err.stream });
  return { code, out: out.text(), err: err.text() };
}

function seed(records: Parameters<Ledger['record']>[0][], price = true): void {
  const l = Ledger.open(ledgerPath(home));
  if (price) l.setPrice('*', 1, 2, 0);
  for (const r of records) l.record(r);
  l.close();
}

describe('usage dates', () => {
  it('a bare date is the local day: --from its midnight, --to the next midnight', () => {
    expect(parseDateArg('2025-01-31', 'from')).toBe(new Date(2025, 0, 31).getTime());
    expect(parseDateArg('2025-01-31', 'to')).toBe(new Date(2025, 1, 1).getTime());
    expect(parseDateArg('2025-01-31T18:00:00Z', 'to')).toBe(Date.UTC(2025, 0, 31, 18));
    expect(() => parseDateArg('2025-02-30', 'from')).toThrow(expect.objectContaining({ code: 'no_such_date', field: 'from' }));
    expect(() => parseDateArg('last tuesday', 'to')).toThrow(expect.objectContaining({ code: 'not_a_date', field: 'to' }));
  });
});

describe('swan-provider usage summary', () => {
  it('says plainly when nothing was recorded yet, without creating a ledger', async () => {
    const r = await run({ action: 'summary' });
    expect(r.code).toBe(0);
    expect(r.err).toMatch(/No usage recorded yet/);
    expect(fs.existsSync(ledgerPath(home))).toBe(false);
  });

  it('prints today / 7 days / 30 days and per-model figures that agree with the ledger', async () => {
    const now = Date.now();
    seed([
      rec(now - 1000, { model: 'alpha', tokensIn: 1_000_000, tokensOut: 0, latencyMs: 800 }),
      rec(now - 2000, { model: 'alpha', status: 'error', latencyMs: 50 }),
      rec(now - 3 * 86_400_000, { model: 'beta', tokensIn: 10, tokensOut: 20, latencyMs: 1500 }),
      rec(now - 20 * 86_400_000, { model: 'beta', tokensIn: 10, tokensOut: 20, latencyMs: 1700 }),
    ]);
    const r = await run({ action: 'summary' });
    expect(r.code, r.err).toBe(0);
    const line = (label: string): string => r.out.split('\n').find((l) => l.startsWith(label)) ?? '';
    // Two requests today, unless the test runs right after midnight (then the first may be "yesterday").
    expect(line('Today')).toMatch(/^Today\s+[12]\s/);
    expect(line('Last 7 days')).toMatch(/^Last 7 days\s+3\s+1 \(33\.3%\)\s+1,000,110\s+70\s+1\.00/);
    expect(line('Last 30 days')).toMatch(/^Last 30 days\s+4\s+1 \(25\.0%\)/);
    expect(line('alpha')).toMatch(/^alpha\s+2\s+50\.0%\s+800 ms\s+800 ms/);
    expect(line('beta')).toMatch(/^beta\s+2\s+0\.0%\s+1500 ms\s+1700 ms/);
    expect(r.out).toContain('Not paused today. [rails_clear]');
  });

  it("says how long the rails paused serving today, by cause, from the ledger's decisions", async () => {
    const now = Date.now();
    const since = Math.max(new Date(now).setHours(0, 0, 0, 0), now - 10 * 60_000);
    const l = Ledger.open(ledgerPath(home));
    l.recordRail({ at: since, code: 'pause_gpu_busy', rail: 'pause', cause: 'gpu_busy', active: true, gpu: null, detail: 'another program' });
    l.recordRail({ at: since + 60_000, code: 'resume_gpu_busy', rail: 'pause', cause: 'gpu_busy', active: false, gpu: null, detail: 'another program' });
    l.close();
    const r = await run({ action: 'summary' });
    expect(r.code, r.err).toBe(0);
    // One minute, unless the test runs in the first minutes after midnight.
    expect(r.out).toMatch(/Paused (1 min|\d+ s) today: GPU busy with another program (1 min|\d+ s)\. \[rails_paused\]/);
    // No served history to estimate from: the cost is said to be unknown, with no figure.
    expect(r.out).toMatch(/not known yet.*\[rails_cost_unknown\]/);
  });

  it('reports a damaged ledger with exit code 1 and what to do', async () => {
    fs.writeFileSync(ledgerPath(home), crypto.randomBytes(8192));
    const r = await run({ action: 'summary' });
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/is damaged .*Move the file aside/);
  });
});

describe('swan-provider usage export', () => {
  const day = (d: number, h: number): number => new Date(2025, 2, d, h).getTime();

  it('writes the CSV of the chosen days to a file', async () => {
    seed([
      rec(day(9, 23), { requestId: 'before' }),
      rec(day(10, 0), { requestId: 'first' }),
      rec(day(11, 23), { requestId: 'last' }),
      rec(day(12, 0), { requestId: 'after' }),
    ]);
    const file = path.join(home, 'out.csv');
    const r = await run({ action: 'export', from: '2025-03-10', to: '2025-03-11', out: file });
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/Wrote 2 records to .*out\.csv/);
    const rows = parseCsv(fs.readFileSync(file, 'utf8'));
    expect(rows.slice(1).map((x) => x[0])).toEqual(['first', 'last']);
  });

  it('writes to stdout when no file is given; its sums agree with the summary', async () => {
    seed([rec(day(10, 1), { tokensIn: 1_000_000, tokensOut: 500_000 }), rec(day(10, 2), { tokensIn: 3, tokensOut: 4, status: 'error' })]);
    const r = await run({ action: 'export', from: '2025-03-10T00:00:00+05:30', to: '2030-01-01' });
    expect(r.code, r.err).toBe(0);
    const rows = parseCsv(r.out);
    expect(rows).toHaveLength(3);
    const earn = rows.slice(1).reduce((n, x) => n + Number(x[17]), 0);
    const l = Ledger.open(ledgerPath(home));
    try {
      expect(earn).toBeCloseTo(l.totals(0, Date.now() + 1).earnings, 9);
    } finally {
      l.close();
    }
    expect(r.err).toMatch(/Exported 2 records/);
  });

  it('cleans escape sequences the hub or an engine put in request ids and model names from what it prints', async () => {
    const hostileId = 'req-\u001b]0;pwned\u0007\u001b[2J\u001b[31mred\u009b1m';
    seed([rec(day(10, 1), { requestId: hostileId, model: 'model-\u001b[8mhidden\u202eevil' })]);
    const r = await run({ action: 'export', from: '2025-03-10', to: '2030-01-01' });
    expect(r.code, r.err).toBe(0);
    expect(r.out).not.toMatch(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u202a-\u202e]/);
    expect(r.out).toContain('req-red,');
    expect(r.out).toContain('model-hiddenevil');
    expect(r.out.endsWith('\r\n')).toBe(true);
    const summary = await run({ action: 'summary' });
    expect(summary.out).not.toContain('\u001b');
  });

  it.skipIf(process.platform === 'win32')('--out writes the file 0600, also over an existing 0644 one', async () => {
    seed([rec(day(10, 1))]);
    const file = path.join(home, 'usage.csv');
    fs.writeFileSync(file, 'old', { mode: 0o644 });
    fs.chmodSync(file, 0o644);
    expect((await run({ action: 'export', out: file })).code).toBe(0);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    fs.rmSync(file);
    expect((await run({ action: 'export', out: file })).code).toBe(0);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  });

  it('refuses bad dates and reversed ranges with exit code 2', async () => {
    seed([]);
    expect((await run({ action: 'export', from: 'yesterday' })).code).toBe(2);
    const r = await run({ action: 'export', from: '2025-03-10', to: '2025-03-01' });
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--to .* is before --from/);
  });

  it('says why when the output file cannot be written', async () => {
    seed([rec(day(10, 1))]);
    const r = await run({ action: 'export', out: path.join(home, 'no-such-folder', 'x.csv') });
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/ENOENT/);
  });
});
