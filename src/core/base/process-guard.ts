// The last line: an exception nothing caught, or a promise rejection nobody handled, is logged with its
// stack and the process keeps serving what it does not touch (the hub link, the console, the gateway's
// other connections). Every known source of such a failure is a bug with a test (each boundary contains
// its own failures: hub dispatch, the relay, engine reads, the bridge, the gateway); this only keeps one
// we do not know yet from stopping every request and, under systemd, from turning into a crash loop.
import type { Logger } from './log';

/** At most this many are logged in full per minute; past it, they are counted and summarised. */
const LOGGED_PER_MINUTE = 20;

export interface ProcessGuard {
  /** How many were caught since install. */
  readonly caught: number;
  dispose(): void;
}

export function installProcessGuard(log: Logger, proc: NodeJS.Process = process): ProcessGuard {
  let caught = 0;
  let windowStart = 0;
  let inWindow = 0;
  let suppressed = 0;
  const report = (kind: string, err: unknown) => {
    caught++;
    const now = Date.now();
    if (now - windowStart > 60_000) {
      if (suppressed > 0) log.error(`${suppressed} more uncaught failures in the last minute were not logged in full`, { code: 'uncaught' });
      windowStart = now;
      inWindow = 0;
      suppressed = 0;
    }
    if (++inWindow > LOGGED_PER_MINUTE) {
      suppressed++;
      return;
    }
    const e = err instanceof Error ? err : new Error(String(err));
    log.error(`${kind}: ${e.message} (the agent keeps running; this is a bug, please report it with the log)`, { code: 'uncaught', stack: e.stack });
  };
  const onException = (err: unknown) => report('uncaught exception', err);
  const onRejection = (err: unknown) => report('unhandled promise rejection', err);
  proc.on('uncaughtException', onException);
  proc.on('unhandledRejection', onRejection);
  return {
    get caught() {
      return caught;
    },
    dispose: () => {
      proc.off('uncaughtException', onException);
      proc.off('unhandledRejection', onRejection);
    },
  };
}
