import { PassThrough, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { CSV_HEADER, csvNumber } from '../../../src/core/ledger/csv';
import type { Ledger } from '../../../src/core/ledger/ledger';
import { ledgerPerTest, parseCsv, rec } from '../../support/ledger/helpers';

let ledger: Ledger;
ledgerPerTest((l) => (ledger = l));

const T = Date.UTC(2025, 4, 6, 7, 8, 9, 10);

/** A Writable with a tiny buffer, so the export has to wait for 'drain'. */
function slowSink(): { stream: Writable; text: () => string; drains: () => number } {
  const chunks: string[] = [];
  let drains = 0;
  const stream = new Writable({
    highWaterMark: 1024,
    write(chunk: Buffer, _enc, cb) {
      chunks.push(chunk.toString('utf8'));
      setImmediate(cb);
    },
  });
  stream.on('drain', () => drains++);
  return { stream, text: () => chunks.join(''), drains: () => drains };
}

describe('CSV export', () => {
  it('has a header row, CRLF line ends, ISO times, and quotes what RFC 4180 says to quote', () => {
    const nasty = 'engine said: "no", then\r\ngave up, badly';
    ledger.setPrice('*', 0.5, 1.5, 0);
    ledger.record(rec(T, { requestId: 'a,1', model: 'llama "q4"', status: 'error', statusCode: 502, error: nasty, estimated: true, ttftMs: null }));
    ledger.record(rec(T + 1, { requestId: 'b', tokensIn: 3, tokensOut: 4 }));
    const text = ledger.exportCsv(T, T + 2);
    expect(text.startsWith(`${CSV_HEADER.join(',')}\r\n`)).toBe(true);
    const rows = parseCsv(text);
    expect(rows[0]).toEqual([...CSV_HEADER]);
    expect(rows).toHaveLength(3);
    const [a, b] = [rows[1]!, rows[2]!];
    expect(a.length).toBe(CSV_HEADER.length);
    const col = (r: string[], name: (typeof CSV_HEADER)[number]): string => r[CSV_HEADER.indexOf(name)]!;
    expect(col(a, 'request_id')).toBe('a,1');
    expect(col(a, 'model')).toBe('llama "q4"');
    expect(col(a, 'error')).toBe(nasty);
    expect(col(a, 'finished_at')).toBe('2025-05-06T07:08:09.010Z');
    expect(col(a, 'counts')).toBe('estimated');
    expect(col(a, 'ttft_ms')).toBe('');
    expect(col(a, 'earnings')).toBe('0');
    expect(col(b, 'counts')).toBe('engine');
    expect(col(b, 'input_price_per_m')).toBe('0.5');
    // 3 × 0.5 + 4 × 1.5 = 7.5 per million tokens: no exponent notation.
    expect(col(b, 'earnings')).toBe('0.0000075');
  });

  it('neutralises text a spreadsheet would run as a formula', () => {
    ledger.record(rec(T, { status: 'error', error: '=HYPERLINK("http://evil","x")' }));
    ledger.record(rec(T, { status: 'error', error: '@SUM(1)' }));
    const errors = parseCsv(ledger.exportCsv(T, T + 1))
      .slice(1)
      .map((r) => r[CSV_HEADER.indexOf('error')]);
    expect(errors).toEqual(['\'=HYPERLINK("http://evil","x")', "'@SUM(1)"]);
  });

  it('writes numbers without exponents', () => {
    expect(csvNumber(1e-7)).toBe('0.0000001');
    expect(csvNumber(12)).toBe('12');
    expect(csvNumber(null)).toBe('');
  });

  it('exports exactly [from, to), oldest first', () => {
    for (let i = 0; i < 10; i++) ledger.record(rec(T + i * 1000, { requestId: `r${i}` }));
    const ids = parseCsv(ledger.exportCsv(T + 2000, T + 5000))
      .slice(1)
      .map((r) => r[0]);
    expect(ids).toEqual(['r2', 'r3', 'r4']);
  });

  it('the streaming export equals the string export across pages, even with many equal times, and waits for drain', async () => {
    // 12,345 records over 3 distinct times: pages (5,000) must split inside equal timestamps.
    ledger.recordBatch(Array.from({ length: 12_345 }, (_, i) => rec(T + (i % 3), { requestId: `id-${i}` })));
    const sink = slowSink();
    const n = await ledger.exportCsvTo(sink.stream, T, T + 3);
    expect(n).toBe(12_345);
    expect(sink.drains()).toBeGreaterThan(0);
    const streamed = sink.text();
    expect(streamed).toBe(ledger.exportCsv(T, T + 3));
    const ids = parseCsv(streamed)
      .slice(1)
      .map((r) => r[0]);
    expect(new Set(ids).size).toBe(12_345);
  });

  it('rejects instead of hanging when the output closes mid-export', async () => {
    ledger.recordBatch(Array.from({ length: 6000 }, (_, i) => rec(T + i)));
    const out = new PassThrough({ highWaterMark: 16 });
    const done = ledger.exportCsvTo(out, T, T + 6000);
    out.destroy();
    await expect(done).rejects.toMatchObject({ code: 'output_closed' });
  });
});
