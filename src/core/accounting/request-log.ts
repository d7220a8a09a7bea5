// One log line per finished request (requests.log in the console, the support bundle).
import type { UsageRecord } from '../../shared/types';
import type { Logger } from '../base/log';
import { TurnQueue } from '../base/turn-queue';

export function requestLine(record: UsageRecord): string {
  const tps = record.tokensPerSecond ? `, ${record.tokensPerSecond.toFixed(1)} tok/s` : '';
  return `${record.source} request ${record.requestId} ${record.model}: ${record.status}${record.error ? ` (${record.error})` : ''}, ${record.tokensIn} in / ${record.tokensOut} out${record.estimated ? ' (estimated)' : ''}, ${record.latencyMs} ms${tps}`;
}

/** ok at info, anything else at warn, with the request id. */
export function logFinished(log: Logger, record: UsageRecord): void {
  if (record.status === 'ok') log.info(requestLine(record), { requestId: record.requestId });
  else log.warn(requestLine(record), { requestId: record.requestId });
}

/**
 * The request lines of one event-loop turn, written right after it (setImmediate): a burst of streams
 * ending together relays its remaining chunks first. Queued after the ledger's batch (accounting/wiring.ts queues
 * the record first), so the finals of those requests leave before their lines are written too.
 */
export class RequestLines {
  private readonly pending: TurnQueue<UsageRecord>;

  constructor(log: Logger) {
    this.pending = new TurnQueue((records) => {
      for (const r of records) logFinished(log, r);
    });
  }

  finished(record: UsageRecord): void {
    this.pending.push(record);
  }

  /** Writes what is queued, now (also on stop). */
  flush(): void {
    this.pending.flush();
  }
}
