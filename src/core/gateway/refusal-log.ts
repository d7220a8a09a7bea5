// The gateway's refusal lines, bounded. Every refused request was logged with its client-chosen path (15 KB
// each) and Origin: a local program wrote 9-30 MB/s to the log, a web page 2.5 MB/s, until the disk was full
// and the ledger stopped. Here a refusal line carries at most MAX_TEXT characters of what the client sent,
// and at most PER_WINDOW lines are written per WINDOW_MS; the rest are counted, and the count is said once
// with the next line written.
import type { Logger } from '../base/log';

/** The most of one refusal's text (client-chosen parts included) a line carries. */
export const MAX_TEXT = 200;
/** Refusal lines written per window at most; the rest are counted. */
export const PER_WINDOW = 20;
export const WINDOW_MS = 10_000;

/** `text` cut to `max` characters, newlines and other controls shown as spaces (one line, whatever was sent). */
export function clipClientText(text: string, max = MAX_TEXT): string {
  const one = text.replace(/[\x00-\x1f\x7f-\x9f\u2028\u2029]/g, ' ');
  return one.length > max ? `${one.slice(0, max)}… (${one.length - max} more characters)` : one;
}

export class RefusalLog {
  private windowStart = -Infinity;
  private written = 0;
  private suppressed = 0;

  constructor(
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** Logs one refusal at `level`, clipped, unless this window's lines are spent (then it is counted). */
  refused(level: 'debug' | 'info' | 'warn', text: string): void {
    const t = this.now();
    if (t - this.windowStart >= WINDOW_MS) {
      if (this.suppressed > 0)
        this.log.warn(`${this.suppressed} more refused request(s) in ${WINDOW_MS / 1000} s were not logged one by one`, {
          code: 'gateway_refusals_suppressed',
          suppressed: this.suppressed,
        });
      this.windowStart = t;
      this.written = 0;
      this.suppressed = 0;
    }
    if (this.written >= PER_WINDOW) {
      this.suppressed++;
      return;
    }
    this.written++;
    this.log[level](clipClientText(text, MAX_TEXT * 2));
  }
}

const perLogger = new WeakMap<Logger, RefusalLog>();

/** The refusal log of a logger (one budget for every refusal line the gateway's parts write through it). */
export function refusalLog(log: Logger): RefusalLog {
  let r = perLogger.get(log);
  if (!r) perLogger.set(log, (r = new RefusalLog(log)));
  return r;
}
