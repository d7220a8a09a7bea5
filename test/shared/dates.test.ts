// One date style and one date-time style: src/shared/dates.ts formats every date and time the console
// and the CLI show. The scan fails when a second format appears anywhere in src/renderer or src/cli.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fmtClock, fmtDate, fmtDateTime, fmtDay, fmtMonth, fmtTime, isoTime } from '../../src/shared/dates';

const root = path.resolve(__dirname, '../..');

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return sources(p);
    return /\.(ts|tsx)$/.test(e.name) ? [p] : [];
  });
}

/** Date APIs that format: each call would be a format of its own. */
const FORMATTING =
  /\.toLocale(Date|Time)?String\(|\.toISOString\(|\.toUTCString\(|\.toDateString\(|\.toTimeString\(|DateTimeFormat\b|\.get(Hours|Minutes|Seconds|Month)\(\)/;
/** Reading a date the owner typed (the CLI's --from/--to) is not formatting. */
const PARSING_ONLY = new Set([path.join(root, 'src/cli/usage-command.ts')]);

describe('one home for dates and times', () => {
  it('formats with one style each: year-first date, date-time, time of day', () => {
    const ts = new Date(2026, 0, 5, 7, 8, 9).getTime(); // local time
    expect(fmtDate(ts)).toBe('2026-01-05');
    expect(fmtDateTime(ts)).toBe('2026-01-05 07:08:09');
    expect(fmtTime(ts)).toBe('07:08:09');
    expect(fmtClock(ts)).toBe('07:08');
    expect(fmtDay(ts)).toBe('01-05');
    expect(fmtMonth(ts)).toBe('2026-01');
    expect(fmtDateTime(ts).startsWith(fmtDate(ts))).toBe(true);
    expect(fmtDateTime(ts).endsWith(fmtTime(ts))).toBe(true);
    expect(isoTime(Date.UTC(2026, 0, 5, 7, 8, 9))).toBe('2026-01-05T07:08:09.000Z');
    expect([fmtDate(null), fmtDateTime(undefined), fmtTime(0), fmtClock(Number.NaN)]).toEqual(['—', '—', '—', '—']);
  });

  it('no other date formatting in the console or the CLI', () => {
    const offenders: string[] = [];
    for (const file of [...sources(path.join(root, 'src/renderer')), ...sources(path.join(root, 'src/cli'))]) {
      fs.readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          const m = FORMATTING.exec(line);
          if (!m) return;
          if (PARSING_ONLY.has(file) && /getFullYear|getMonth|getDate/.test(line)) return;
          offenders.push(`${path.relative(root, file)}:${i + 1}: ${m[0]}`);
        });
    }
    expect(offenders).toEqual([]);
  });
});
