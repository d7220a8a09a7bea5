// One log line per finished request (requests.log in the console, the support bundle).
import type { UsageRecord } from '../../shared/types';
import type { Logger } from '../log';

export function requestLine(record: UsageRecord): string {
  const tps = record.tokensPerSecond ? `, ${record.tokensPerSecond.toFixed(1)} tok/s` : '';
  return `${record.source} request ${record.requestId} ${record.model}: ${record.status}${record.error ? ` (${record.error})` : ''}, ${record.tokensIn} in / ${record.tokensOut} out${record.estimated ? ' (estimated)' : ''}, ${record.latencyMs} ms${tps}`;
}

/** ok at info, anything else at warn, with the request id. */
export function logFinished(log: Logger, record: UsageRecord): void {
  if (record.status === 'ok') log.info(requestLine(record), { requestId: record.requestId });
  else log.warn(requestLine(record), { requestId: record.requestId });
}
