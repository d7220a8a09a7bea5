// The agent's terminal as an approval channel: a request is announced with its code; only "approve CODE"
// (or "deny CODE") typed there decides it — a bare Enter, a wrong code or another line approves nothing.
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { OwnerApprovals } from '../../src/core/owner/approvals';
import { memoryLog } from '../../src/core/base/log';
import { attachApprovalTerminal } from '../../src/cli/approval-terminal';
import { tempHome, until } from '../support/stack';

let approvals: OwnerApprovals | undefined;
afterEach(() => approvals?.close());

describe('attachApprovalTerminal', () => {
  it('announces the request and approves only on "approve CODE"', async () => {
    approvals = new OwnerApprovals({ home: tempHome('swan-term-'), log: memoryLog().child('approvals') });
    const input = new PassThrough();
    let out = '';
    const other: string[] = [];
    const detach = attachApprovalTerminal(approvals, { input, write: (t) => (out += t), other: (l) => other.push(l) });
    let applied = 0;
    const c = approvals.request({ kind: 'key_destination', summary: 'Send your key to \u001b]0;evil\u0007evil:1.', apply: () => applied++ });
    expect(out).toContain(`approve ${c.code}`);
    expect(out).not.toContain('\u001b');
    input.write('\n');
    input.write('approve WRNG-CODE\n');
    input.write('yes\n');
    await until(() => out.includes('No approval WRNG-CODE'), 'the wrong code is answered');
    expect(applied).toBe(0);
    expect(other).toEqual(['', 'yes']);
    input.write(`approve ${c.code.toLowerCase()}\r\n`);
    await until(() => applied === 1, 'approved from the terminal');
    await until(() => out.includes('Approved.'), 'the terminal says so');
    detach();
  });
});
