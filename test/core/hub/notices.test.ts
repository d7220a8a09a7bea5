// Hub notices: validated, clamped, rate-limited and kept, as HUB-PROTOCOL.md and the Go provider's
// hub_notice.go say. Codes are asserted, not prose.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { memoryLog } from '../../../src/core/base/log';
import { NOTICE_LIMITS, NoticeBook, NoticeRateLimiter, sanitizeNotice } from '../../../src/core/hub/notices';
import { tempHome } from '../../support/stack';

const ok = (raw: unknown) => {
  const v = sanitizeNotice(raw);
  if (!v.ok) throw new Error(`dropped: ${v.code} ${v.reason}`);
  return v.notice;
};
const code = (raw: unknown) => {
  const v = sanitizeNotice(raw);
  return v.ok ? 'accepted' : v.code;
};

describe('sanitizeNotice', () => {
  it('keeps a well-formed notice', () => {
    expect(
      ok({ event: 'reputation_dropped', severity: 'critical', model_id: 'Qwen/Qwen3.8-27B', message: 'routing paused', details: { until: '14:00Z' } }),
    ).toEqual({
      event: 'reputation_dropped',
      severity: 'critical',
      modelId: 'Qwen/Qwen3.8-27B',
      message: 'routing paused',
      details: { until: '14:00Z' },
    });
  });

  it('drops event names outside [a-z0-9_] or over 64 characters, including header-injection attempts', () => {
    for (const evil of ['suspended\r\nBcc: a@b.c', 'suspended\nx', 'suspended\u0000nul', 'subject: fake', 'has space', 'dash-ed', '', 'x'.repeat(65)]) {
      expect(code({ event: evil, message: 'hello' }), JSON.stringify(evil)).toBe('bad_event');
    }
    expect(code({ message: 'no event' })).toBe('bad_event');
    expect(code({ event: 42, message: 'm' })).toBe('bad_event');
    // Trimmed and lower-cased first, as in Go.
    expect(ok({ event: '  PROVIDER_SUSPENDED ', message: 'm' }).event).toBe('provider_suspended');
    expect(ok({ event: 'x'.repeat(64), message: 'm' }).event).toHaveLength(64);
  });

  it('strips control characters from the message (newlines survive) and drops a notice with no message', () => {
    expect(ok({ event: 'e', message: 'line one\r\nline two\u0007\u001b[31m' }).message).toBe('line one\nline two[31m');
    expect(code({ event: 'e', message: ' \r\n ' })).toBe('no_message');
    expect(code({ event: 'e' })).toBe('no_message');
    expect(code({ event: 'e', message: 5 })).toBe('bad_field');
  });

  it('clamps the message to 1000 characters with a visible mark, rune-safe; a far longer one is dropped as oversized', () => {
    const m = ok({ event: 'e', message: '日'.repeat(2000) }).message;
    expect([...m].length).toBeLessThanOrEqual(NOTICE_LIMITS.messageLength + '… (truncated)'.length);
    expect(m.endsWith('(truncated)')).toBe(true);
    expect(m).not.toContain('\ufffd');
    expect(ok({ event: 'e', message: 'a'.repeat(1000) }).message).toHaveLength(1000);
    expect(code({ event: 'e', message: 'a'.repeat(NOTICE_LIMITS.messageDropLength + 1) })).toBe('oversized');
    expect(code({ event: 'e', message: 'm', details: { a: 'x'.repeat(70_000) } })).toBe('oversized');
  });

  it('bounds details to 16 entries of 200 characters with whitelisted keys', () => {
    const details: Record<string, unknown> = { 'bad key!': 'dropped', a_nested: { a: 1 }, a_num: 3, ctl: 'bad\rvalue' };
    for (let i = 0; i < 40; i++) details[`k${String(i).padStart(2, '0')}`] = 'v'.repeat(500);
    const d = ok({ event: 'e', message: 'm', details }).details!;
    expect(Object.keys(d)).toHaveLength(NOTICE_LIMITS.details);
    expect(d['bad key!']).toBeUndefined();
    expect(d.a_nested).toBeUndefined();
    expect(d.ctl).toBe('badvalue');
    expect(d.a_num).toBe('3');
    for (const v of Object.values(d)) expect([...v].length).toBeLessThanOrEqual(NOTICE_LIMITS.detailLength + '… (truncated)'.length);
  });

  it('reads an unknown severity as warning, never as critical', () => {
    for (const [raw, want] of [
      ['critical', 'critical'],
      ['CRITICAL', 'critical'],
      ['info', 'info'],
      ['', 'warning'],
      ['emergency', 'warning'],
      ['\r\nBcc:', 'warning'],
      [undefined, 'warning'],
    ] as const) {
      expect(ok({ event: 'e', message: 'm', severity: raw }).severity, String(raw)).toBe(want);
    }
  });

  it('cleans a model_id with control characters (never drops the notice) and keeps only Hugging Face id characters', () => {
    const v = sanitizeNotice({ event: 'e', message: 'm', model_id: 'Qwen/Qwen3\r\nBcc: x@y.z' });
    expect(v.ok && v.notice.modelId).toBe('Qwen/Qwen3Bccxy.z');
    expect(v.ok && v.notes).toContain('control characters stripped from model_id');
    expect(ok({ event: 'e', message: 'm', model_id: 'org/m\u0000odel\u009b' }).modelId).toBe('org/model');
    expect(ok({ event: 'e', message: 'm', model_id: 'Qwen/Qwen3 8B@x' }).modelId).toBe('Qwen/Qwen38Bx');
    expect(code({ event: 'e', message: 'm', model_id: 7 })).toBe('bad_field');
  });

  it('drops payloads that are not objects', () => {
    for (const raw of [null, 'notice', [1, 2], 5]) expect(code(raw)).toBe('not_an_object');
  });
});

describe('NoticeRateLimiter', () => {
  it('allows 20 an hour, then drops and reports how many it dropped once the window rolls', () => {
    let now = 1_750_000_000_000;
    const l = new NoticeRateLimiter(20, 3_600_000, () => now);
    for (let i = 0; i < 20; i++) expect(l.allow().ok).toBe(true);
    expect(l.allow()).toEqual({ ok: false, dropped: 1 });
    expect(l.allow()).toEqual({ ok: false, dropped: 2 });
    now += 3_600_001;
    expect(l.allow()).toEqual({ ok: true, dropped: 2 });
    expect(l.allow()).toEqual({ ok: true, dropped: 0 });
  });
});

describe('NoticeBook', () => {
  let home: string | undefined;
  afterEach(() => {
    if (home) fs.rmSync(home, { recursive: true, force: true });
    home = undefined;
  });

  it('keeps the last notices in a 0600 file that a new book reads back, newest first', () => {
    home = tempHome();
    const log = memoryLog();
    const book = new NoticeBook({ home, log: log.child('notices'), keep: 3 });
    for (let i = 0; i < 5; i++) expect(book.receive({ event: `e${i}`, severity: 'info', message: `m${i}` })).toBeDefined();
    expect(book.list().map((n) => n.event)).toEqual(['e4', 'e3', 'e2']);
    const file = path.join(home, 'notices.json');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const again = new NoticeBook({ home, log: log.child('notices'), keep: 3 });
    expect(again.list().map((n) => n.event)).toEqual(['e4', 'e3', 'e2']);
  });

  it('logs a dropped notice with its code and never throws; a rate-limited one is counted', () => {
    home = tempHome();
    const log = memoryLog();
    let now = 1_000;
    const book = new NoticeBook({ home, log: log.child('notices'), now: () => now, limiter: new NoticeRateLimiter(2, 3_600_000, () => now) });
    expect(book.receive({ event: 'bad event', message: 'm' })).toBeUndefined();
    expect(book.receive('garbage')).toBeUndefined();
    expect(log.entries(10, 'warn').map((e) => e.msg)).toEqual(
      expect.arrayContaining([expect.stringContaining('(bad_event)'), expect.stringContaining('(not_an_object)')]),
    );
    expect(book.receive({ event: 'a', message: 'm' })).toBeDefined();
    expect(book.receive({ event: 'b', message: 'm' })).toBeDefined();
    expect(book.receive({ event: 'c', message: 'm' })).toBeUndefined();
    expect(book.counters).toEqual({ accepted: 2, dropped: 2, rateLimited: 1 });
    now += 3_600_001;
    expect(book.receive({ event: 'd', message: 'm' })).toBeDefined();
  });

  it('ignores a notices file that is not ours or was edited into something unsafe', () => {
    home = tempHome();
    fs.writeFileSync(
      path.join(home, 'notices.json'),
      JSON.stringify([
        { id: 'x', receivedAt: 1, event: 'bad event', severity: 'info', message: 'm' },
        { id: 'y', receivedAt: 2, event: 'ok', severity: 'info', message: 'fine' },
        'junk',
      ]),
    );
    const book = new NoticeBook({ home, log: memoryLog().child('n') });
    expect(book.list().map((n) => n.id)).toEqual(['y']);
    fs.writeFileSync(path.join(home, 'notices.json'), '{not json');
    expect(new NoticeBook({ home, log: memoryLog().child('n') }).list()).toEqual([]);
  });
});
