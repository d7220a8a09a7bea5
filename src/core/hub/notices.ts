// Hub notices (`notice {event, severity, model_id?, message, details?}`, HUB-PROTOCOL.md): facts the hub
// knows about this provider that it cannot see itself (reputation dropped, traffic withheld, a
// declaration rejected, a payout pending). The hub is a remote party, so a notice is validated and
// clamped before anyone sees it, as the Go provider does (internal/computing/hub_notice.go):
// - event: trimmed, lower-cased, [a-z0-9_] only, at most 64 characters; anything else drops the notice;
// - severity: info | warning | critical; anything else becomes warning (it may not claim to be critical);
// - model_id: only the characters a Hugging Face id uses are kept (control characters stripped), at most 200;
// - message: control characters stripped (newlines kept), clamped to 1000 with a visible mark;
//   empty drops it, and one over 4 × that limit (or a payload over 64 KiB) is dropped as oversized;
// - details: at most 16 entries, keys like event names, values stripped and clamped to 200.
// At most 20 notices an hour are shown (the rest are counted and reported). A notice is never answered.
// The last notices are kept in <home>/notices.json (0600) so they survive a restart and a page reload.
import crypto from 'node:crypto';
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import type { HubNoticeView, NoticeSeverity } from '../../shared/views/snapshot';
import type { Logger } from '../base/log';
import { homePath } from '../config/home-layout';
import { writeJsonAtomic } from '../config/atomic-file';
import { Ring } from '../../shared/ring';

export const NOTICE_LIMITS = {
  eventLength: 64,
  messageLength: 1000,
  modelIdLength: 200,
  details: 16,
  detailLength: 200,
  /** A message longer than this is not a long notice but a broken or hostile hub: dropped. */
  messageDropLength: 4000,
  payloadBytes: 64 * 1024,
  perHour: 20,
  kept: 50,
} as const;

const TRUNCATED = '… (truncated)';
const EVENT_RE = /^[a-z0-9_]+$/;
// C0 controls and DEL, and the C1 range; \n is handled apart (kept in messages).
const CONTROL_RE = /[\u0000-\u001f\u007f-\u009f]/;

export type NoticeDropCode = 'not_an_object' | 'bad_event' | 'no_message' | 'oversized' | 'bad_field' | 'rate_limited';

export type SanitizedNotice = Omit<HubNoticeView, 'id' | 'receivedAt'>;
export type NoticeVerdict = { ok: true; notice: SanitizedNotice; notes: string[] } | { ok: false; code: NoticeDropCode; reason: string };

function event(raw: unknown): string | undefined {
  if (typeof raw !== 'string') return undefined;
  const s = raw.trim().toLowerCase();
  if (s.length === 0 || s.length > NOTICE_LIMITS.eventLength || !EVENT_RE.test(s)) return undefined;
  return s;
}

/** Strips control characters (keeping newlines when `keepNewlines`), trims, clamps to `n` characters with a mark. */
export function clampText(raw: string, n: number, keepNewlines: boolean): string {
  let out = '';
  for (const ch of raw) {
    if (ch === '\n' && keepNewlines) out += ch;
    else if (!CONTROL_RE.test(ch)) out += ch;
  }
  const s = out.trim();
  const chars = [...s];
  return chars.length > n ? `${chars.slice(0, n).join('').trim()}${TRUNCATED}` : s;
}

function severity(raw: unknown): NoticeSeverity {
  const s = typeof raw === 'string' ? raw.trim().toLowerCase() : '';
  return s === 'info' || s === 'critical' || s === 'warning' ? s : 'warning';
}

function details(raw: unknown): Record<string, string> | undefined {
  if (raw === undefined || raw === null || typeof raw !== 'object' || Array.isArray(raw)) return undefined;
  const out: Record<string, string> = {};
  // Sorted, so a too-large map loses the same keys every time.
  for (const k of Object.keys(raw).sort()) {
    if (Object.keys(out).length >= NOTICE_LIMITS.details) break;
    const key = event(k);
    const v = (raw as Record<string, unknown>)[k];
    if (!key || !(typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean')) continue;
    out[key] = clampText(String(v), NOTICE_LIMITS.detailLength, false);
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** Validates and clamps one notice payload; says why when it is dropped. Pure. */
export function sanitizeNotice(raw: unknown): NoticeVerdict {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return { ok: false, code: 'not_an_object', reason: 'the payload is not a JSON object' };
  const p = raw as Record<string, unknown>;
  const size = Buffer.byteLength(JSON.stringify(p));
  if (size > NOTICE_LIMITS.payloadBytes) return { ok: false, code: 'oversized', reason: `the payload is ${size} bytes (limit ${NOTICE_LIMITS.payloadBytes})` };
  const ev = event(p.event);
  if (!ev) {
    const shown = typeof p.event === 'string' ? JSON.stringify(p.event.slice(0, 80)) : typeof p.event;
    return {
      ok: false,
      code: 'bad_event',
      reason: `event name ${shown} is empty, longer than ${NOTICE_LIMITS.eventLength} or has characters outside [a-z0-9_]`,
    };
  }
  if (p.message !== undefined && typeof p.message !== 'string') return { ok: false, code: 'bad_field', reason: `notice "${ev}": message is not a string` };
  const rawMessage = (p.message as string | undefined) ?? '';
  if ([...rawMessage].length > NOTICE_LIMITS.messageDropLength) {
    return {
      ok: false,
      code: 'oversized',
      reason: `notice "${ev}": message of ${[...rawMessage].length} characters (more than ${NOTICE_LIMITS.messageDropLength})`,
    };
  }
  const notes: string[] = [];
  let modelId: string | undefined;
  if (p.model_id !== undefined && p.model_id !== null && p.model_id !== '') {
    if (typeof p.model_id !== 'string') return { ok: false, code: 'bad_field', reason: `notice "${ev}": model_id is not a string` };
    // Cleaned, never dropped (Go's TestNoticeModelIDIsSanitized): a control character is stripped with
    // everything else a Hugging Face id does not use, so it can reach no log line or header.
    modelId = [...p.model_id.trim()]
      .slice(0, NOTICE_LIMITS.modelIdLength)
      .filter((c) => /[A-Za-z0-9/._-]/.test(c))
      .join('');
    if (modelId !== p.model_id) notes.push(CONTROL_RE.test(p.model_id) ? 'control characters stripped from model_id' : 'model_id cleaned');
  }
  const message = clampText(rawMessage, NOTICE_LIMITS.messageLength, true);
  if (message === '') return { ok: false, code: 'no_message', reason: `notice "${ev}" carries no message` };
  if (/[\r\u0000-\u0009\u000b-\u001f\u007f-\u009f]/.test(rawMessage)) notes.push('control characters stripped from the message');
  if (message.endsWith(TRUNCATED) && !rawMessage.trim().endsWith(TRUNCATED)) notes.push(`message clamped to ${NOTICE_LIMITS.messageLength} characters`);
  const sev = severity(p.severity);
  if (p.severity !== undefined && sev !== p.severity) notes.push(`severity ${JSON.stringify(String(p.severity).slice(0, 20))} read as ${sev}`);
  const d = details(p.details);
  return { ok: true, notice: { event: ev, severity: sev, ...(modelId ? { modelId } : {}), message, ...(d ? { details: d } : {}) }, notes };
}

/** At most `limit` notices per fixed window; counts what it refused so the next allowed one can say so. */
export class NoticeRateLimiter {
  private start = 0;
  private count = 0;
  private dropped = 0;
  constructor(
    private readonly limit: number = NOTICE_LIMITS.perHour,
    private readonly windowMs: number = 3_600_000,
    private readonly now: () => number = Date.now,
  ) {}

  allow(): { ok: boolean; dropped: number } {
    const t = this.now();
    if (this.start === 0 || t - this.start >= this.windowMs) {
      this.start = t;
      this.count = 0;
    }
    if (this.count >= this.limit) {
      this.dropped++;
      return { ok: false, dropped: this.dropped };
    }
    this.count++;
    const dropped = this.dropped;
    this.dropped = 0;
    return { ok: true, dropped };
  }
}

export interface NoticeBookOptions {
  home: string;
  log: Logger;
  limiter?: NoticeRateLimiter;
  keep?: number;
  now?: () => number;
}

export interface NoticeBookEvents {
  notice: [HubNoticeView];
}

const storedNotice = (x: unknown): x is HubNoticeView => {
  if (x === null || typeof x !== 'object') return false;
  const n = x as Record<string, unknown>;
  return (
    typeof n.id === 'string' &&
    typeof n.receivedAt === 'number' &&
    typeof n.event === 'string' &&
    typeof n.message === 'string' &&
    sanitizeNotice({ ...n, model_id: n.modelId }).ok
  );
};

/** Receives notices from the link, keeps the last ones on disk, and tells the console. */
export class NoticeBook extends EventEmitter<NoticeBookEvents> {
  private readonly file: string;
  private readonly keep: number;
  private readonly limiter: NoticeRateLimiter;
  private readonly now: () => number;
  private readonly items: Ring<HubNoticeView>;
  readonly counters = { accepted: 0, dropped: 0, rateLimited: 0 };

  constructor(private readonly o: NoticeBookOptions) {
    super();
    this.file = homePath(o.home, 'notices');
    this.keep = o.keep ?? NOTICE_LIMITS.kept;
    this.now = o.now ?? Date.now;
    this.limiter = o.limiter ?? new NoticeRateLimiter(NOTICE_LIMITS.perHour, 3_600_000, this.now);
    this.items = new Ring(this.keep);
    for (const n of this.read()) this.items.push(n);
  }

  /** Newest first. */
  list(): HubNoticeView[] {
    return this.items.toArray().reverse();
  }

  /** Handles one inbound notice payload. Never throws; returns the stored notice, or undefined when dropped. */
  receive(raw: unknown): HubNoticeView | undefined {
    const v = sanitizeNotice(raw);
    if (!v.ok) {
      this.counters.dropped++;
      this.o.log.warn(`dropped a hub notice (${v.code}): ${v.reason}`, { code: `notice_${v.code}` });
      return undefined;
    }
    const rate = this.limiter.allow();
    if (!rate.ok) {
      this.counters.rateLimited++;
      if (rate.dropped === 1)
        this.o.log.warn(`hub notices over ${NOTICE_LIMITS.perHour} an hour: dropping more until the hour is over`, { code: 'notice_rate_limited' });
      return undefined;
    }
    if (rate.dropped > 0) this.o.log.warn(`${rate.dropped} hub notice(s) were dropped by the rate limit in the last hour`, { code: 'notice_rate_limited' });
    const n: HubNoticeView = { id: crypto.randomUUID(), receivedAt: this.now(), ...v.notice };
    this.items.push(n);
    this.counters.accepted++;
    const line = `hub notice ${n.event}${n.modelId ? ` (${n.modelId})` : ''}: ${n.message}${v.notes.length ? ` [${v.notes.join('; ')}]` : ''}`;
    if (n.severity === 'critical') this.o.log.error(line, { code: 'notice' });
    else if (n.severity === 'warning') this.o.log.warn(line, { code: 'notice' });
    else this.o.log.info(line, { code: 'notice' });
    this.write();
    this.emit('notice', n);
    return n;
  }

  private read(): HubNoticeView[] {
    try {
      const raw = JSON.parse(fs.readFileSync(this.file, 'utf8')) as unknown;
      if (!Array.isArray(raw)) return [];
      // The file is ours, but a hand edit or a broken write must not put bad text in the console.
      return raw.filter(storedNotice).slice(-this.keep);
    } catch {
      return [];
    }
  }

  private write(): void {
    try {
      writeJsonAtomic(this.file, this.items.toArray(), 0);
    } catch (e) {
      this.o.log.error(`could not keep hub notices in ${this.file}: ${(e as Error).message}. They are shown until the agent restarts.`);
    }
  }
}
