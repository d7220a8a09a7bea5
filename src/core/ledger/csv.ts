// CSV of usage rows, RFC 4180: CRLF line ends, a header row, fields holding a comma, quote, CR or
// LF wrapped in double quotes with inner quotes doubled. Times are ISO 8601 UTC.
//
// Text that comes from outside (engine error messages, model names) and starts with = + - @ or a
// tab is prefixed with a single quote, so a spreadsheet shows it as text instead of running it as a
// formula (OWASP "CSV injection"). Numbers are never altered.
// The rate columns hold the rate the row earned at (rate_source: network = the platform's payout
// rate, override = the owner's own estimate); cost is the GPU energy at the owner's electricity
// price in USD; net = earnings - cost.
import type { UsageRow } from './usage-record';

export const CSV_HEADER = [
  'request_id',
  'source',
  'model',
  'endpoint',
  'started_at',
  'finished_at',
  'tokens_in',
  'tokens_out',
  'counts',
  'latency_ms',
  'ttft_ms',
  'tokens_per_second',
  'status',
  'status_code',
  'error',
  'input_price_per_m',
  'output_price_per_m',
  'earnings',
  'rate_source',
  'energy_wh',
  'cost',
  'net',
] as const;

/** A usage row with the prices it was earned at and what it earned. */
export interface CsvRow extends UsageRow {
  input_per_m: number | null;
  output_per_m: number | null;
  earnings: number;
  /** network | override (the owner's estimate) | null (unpriced). */
  rate_source: string | null;
  energy_wh: number | null;
  /** USD of electricity at the owner's price; null when no price or no power samples. */
  cost: number | null;
}

const NEEDS_QUOTES = /[",\r\n]/;
const FORMULA_START = /^[=+\-@\t\r]/;

export function csvText(value: string | null): string {
  if (value === null) return '';
  const safe = FORMULA_START.test(value) ? `'${value}` : value;
  return NEEDS_QUOTES.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/** A number without exponent notation (earnings of a few tokens are around 1e-7). */
export function csvNumber(value: number | null): string {
  if (value === null || !Number.isFinite(value)) return '';
  if (Number.isInteger(value)) return String(value);
  // One pass: trailing zeros, and the point when nothing is left after it.
  return value.toFixed(9).replace(/\.?0+$/, '');
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

export function csvHeaderLine(): string {
  return `${CSV_HEADER.join(',')}\r\n`;
}

export function csvLine(r: CsvRow): string {
  const earnings = csvNumber(r.earnings);
  return (
    [
      csvText(r.request_id),
      csvText(r.source),
      csvText(r.model),
      csvText(r.endpoint),
      iso(r.started_at),
      iso(r.finished_at),
      csvNumber(r.tokens_in),
      csvNumber(r.tokens_out),
      r.estimated ? 'estimated' : 'engine',
      csvNumber(r.latency_ms),
      csvNumber(r.ttft_ms),
      csvNumber(r.tokens_per_second),
      csvText(r.status),
      csvNumber(r.status_code),
      csvText(r.error),
      csvNumber(r.input_per_m),
      csvNumber(r.output_per_m),
      earnings,
      csvText(r.rate_source),
      csvNumber(r.energy_wh),
      csvNumber(r.cost),
      r.cost === null ? earnings : csvNumber(r.earnings - r.cost),
    ].join(',') + '\r\n'
  );
}

/** The columns a CSV line is made of, read as an array (csvRowOf) from `usage u`. */
export const CSV_SELECT = `SELECT u.id, u.request_id, u.source, u.model, u.endpoint, u.started_at, u.finished_at, u.tokens_in, u.tokens_out,
  u.estimated, u.latency_ms, u.ttft_ms, u.tokens_per_second, u.status, u.status_code, u.error, u.earnings,
  u.rate_in, u.rate_out, u.rate_source, u.energy_wh, u.cost FROM usage u`;

/** One csvSelect row as an array, in its column order. */
export type CsvRaw = [
  number,
  string,
  string,
  string,
  string,
  number,
  number,
  number,
  number,
  number,
  number,
  number | null,
  number | null,
  string,
  number | null,
  string | null,
  number,
  number | null,
  number | null,
  string | null,
  number | null,
  number | null,
];

/** A CSV_SELECT row as the CsvRow it is (its id beside). */
export function csvRowOf(a: CsvRaw): CsvRow & { id: number } {
  return {
    id: a[0],
    request_id: a[1],
    source: a[2],
    model: a[3],
    endpoint: a[4],
    started_at: a[5],
    finished_at: a[6],
    tokens_in: a[7],
    tokens_out: a[8],
    estimated: a[9],
    latency_ms: a[10],
    ttft_ms: a[11],
    tokens_per_second: a[12],
    status: a[13],
    status_code: a[14],
    error: a[15],
    earnings: a[16],
    input_per_m: a[17],
    output_per_m: a[18],
    rate_source: a[19],
    energy_wh: a[20],
    cost: a[21],
  };
}
