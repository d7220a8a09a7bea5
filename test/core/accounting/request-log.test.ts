// RequestLines: the request lines of one turn are written right after it, in order; flush() writes now.
import { describe, expect, it } from 'vitest';
import { RequestLines } from '../../../src/core/accounting/request-log';
import { memoryLog } from '../../../src/core/base/log';
import { rec } from '../../support/ledger/helpers';

describe('RequestLines', () => {
  it('writes the lines of a turn after it, in order, ok at info and failures at warn', async () => {
    const log = memoryLog();
    const lines = new RequestLines(log.child('requests'));
    const a = rec(Date.now());
    const b = rec(Date.now(), { status: 'error', error: 'engine down' });
    lines.finished(a);
    lines.finished(b);
    expect(log.entries()).toHaveLength(0); // not inside the turn the requests ended in
    await new Promise((r) => setImmediate(r));
    const got = log.entries();
    expect(got.map((e) => [e.requestId, e.level, e.subsystem])).toEqual([
      [a.requestId, 'info', 'requests'],
      [b.requestId, 'warn', 'requests'],
    ]);
  });

  it('flush() writes what is queued at once (on stop)', () => {
    const log = memoryLog();
    const lines = new RequestLines(log.child('requests'));
    const a = rec(Date.now());
    lines.finished(a);
    lines.flush();
    expect(log.entries().map((e) => e.requestId)).toEqual([a.requestId]);
  });
});
