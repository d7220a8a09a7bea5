// The hub dispatch boundary: a handler that throws, or whose promise rejects, fails that one message only;
// the link logs it with the request id and answers with a coded 500 when nothing went out for it yet.
import { describe, expect, it } from 'vitest';
import { dispatch, hubTable, type LinkSession } from '../../../src/core/hub/dispatch';
import { memoryLog } from '../../../src/core/base/log';
import { parseInbound } from '../../../src/core/protocol/messages';

const session: LinkSession = { ack: () => undefined, error: () => false, unknown: () => undefined };

describe('dispatch', () => {
  it('contains a synchronous throw and a rejected promise to the message', async () => {
    const failures: Array<[string, boolean]> = [];
    const table = hubTable(session, {
      relay: {
        inference: () => {
          throw new RangeError('Maximum call stack size exceeded');
        },
        cancel: () => undefined,
        resume: () => Promise.reject(new Error('later')),
      },
      notices: { receive: () => undefined },
      challenges: { warmup: () => undefined, verify: () => Promise.reject(new Error('verify broke')), benchmark: () => undefined },
      log: memoryLog().child('hub'),
    });
    const on = (text: string) => dispatch(table, parseInbound(text), (e, later) => failures.push([(e as Error).message, later]));
    on('{"type":"inference","request_id":"r1","payload":{"model_id":"m","request":{"model":"m","messages":[]}}}');
    on('{"type":"resume","request_id":"r2","payload":{"last_seq":1}}');
    on('{"type":"verify","request_id":"r3","payload":{}}');
    await new Promise((r) => setImmediate(r));
    expect(failures).toEqual([
      ['Maximum call stack size exceeded', false],
      ['later', true],
      ['verify broke', true],
    ]);
  });
});
