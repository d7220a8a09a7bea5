// The desktop approval dialog's words: it names what would happen and the hosts, says "not encrypted" for
// plain connections, and Deny is both the default and what Escape means.
import { describe, expect, it } from 'vitest';
import { approvalPrompt } from '../../src/main/approval-prompt';
import type { OwnerConfirmation } from '../../src/shared/bridge-error';

const c: OwnerConfirmation = {
  approvalId: 'a'.repeat(24),
  code: 'ABCD-EFGH',
  kind: 'key_destination',
  summary: 'Send your provider key to evil.example:8092, which has not received it before.',
  hosts: ['evil.example:8092'],
  insecure: ['evil.example:8092'],
  approveCommand: 'swan-provider approve ABCD-EFGH',
  expiresAt: Date.now() + 60_000,
};

describe('approvalPrompt', () => {
  it('denies by default and names the host, the code and the plain connection', () => {
    const p = approvalPrompt(c);
    expect(p.buttons[p.defaultId]).toBe('Deny');
    expect(p.buttons[p.cancelId]).toBe('Deny');
    expect(p.detail).toContain('evil.example:8092');
    expect(p.detail).toContain('Not encrypted');
    expect(p.detail).toContain('ABCD-EFGH');
    expect(approvalPrompt({ ...c, insecure: [] }).detail).not.toContain('Not encrypted');
    expect(approvalPrompt({ ...c, kind: 'gateway_key' }).message).toMatch(/gateway key/);
    expect(approvalPrompt({ ...c, kind: 'fleet_token' }).message).toMatch(/read this rig/);
  });
});
