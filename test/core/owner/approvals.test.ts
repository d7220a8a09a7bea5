// Owner approvals: a held change runs only when the owner decides through a channel outside the console
// (by code or id, or a decision file written into the home's approvals/ folder), never twice, and not at
// all when denied, replaced or expired.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { APPROVALS_DIR, normalizeCode, OwnerApprovals, type ApprovalFile } from '../../../src/core/owner/approvals';
import { memoryLog } from '../../../src/core/base/log';
import type { ApprovalView } from '../../../src/shared/bridge-error';
import { tempHome, until } from '../../support/stack';

const made: OwnerApprovals[] = [];
afterEach(() => {
  for (const a of made.splice(0)) a.close();
});

function approvals(o: { ttlMs?: number } = {}) {
  const home = tempHome('swan-approvals-');
  const a = new OwnerApprovals({ home, log: memoryLog().child('approvals'), ...o });
  made.push(a);
  const settled: ApprovalView[] = [];
  a.on('settled', (v) => settled.push(v));
  return { a, home, settled };
}

describe('OwnerApprovals', () => {
  it('applies a held change once, when approved by its code', async () => {
    const { a, settled } = approvals();
    let applied = 0;
    const c = a.request({ kind: 'key_destination', summary: 'Send your key to evil:1.', hosts: ['evil:1'], apply: () => applied++ });
    expect(c.code).toMatch(/^[A-Z2-9]{4}-[A-Z2-9]{4}$/);
    expect(c.approveCommand).toContain(`approve ${c.code}`);
    expect(a.pending().map((p) => p.approvalId)).toEqual([c.approvalId]);
    expect(applied).toBe(0);
    expect(await a.decide(c.code.toLowerCase().replace('-', ' '), 'approve', 'test')).toMatchObject({ status: 'approved' });
    expect(applied).toBe(1);
    expect(await a.decide(c.code, 'approve', 'test')).toBeUndefined();
    expect(applied).toBe(1);
    expect(settled).toEqual([{ approvalId: c.approvalId, kind: 'key_destination', status: 'approved' }]);
  });

  it('a denied, replaced or expired change never runs', async () => {
    const { a, settled } = approvals({ ttlMs: 50 });
    let applied = 0;
    const first = a.request({ kind: 'key_destination', summary: 'one', apply: () => applied++ });
    const second = a.request({ kind: 'key_destination', summary: 'two', apply: () => applied++ });
    expect(settled[0]).toMatchObject({ approvalId: first.approvalId, status: 'expired' });
    expect(await a.decide(first.code, 'approve', 'test')).toBeUndefined();
    expect(await a.decide(second.code, 'deny', 'test')).toMatchObject({ status: 'denied' });
    const third = a.request({ kind: 'engine_endpoint', summary: 'three', apply: () => applied++ });
    await until(() => settled.some((s) => s.approvalId === third.approvalId), 'the approval expires');
    expect(settled.at(-1)).toMatchObject({ status: 'expired' });
    expect(await a.decide(third.code, 'approve', 'test')).toBeUndefined();
    expect(applied).toBe(0);
  });

  it('a change that fails when applied settles as failed with the reason', async () => {
    const { a } = approvals();
    const c = a.request({ kind: 'key_destination', summary: 'x', apply: () => Promise.reject(new Error('disk full')) });
    expect(await a.decide(c.approvalId, 'approve', 'test')).toMatchObject({ status: 'failed', error: 'disk full' });
  });

  it('a decision file in the approvals folder is the CLI channel; the pending file says how it ended', async () => {
    const { a, home, settled } = approvals();
    let applied = 0;
    const c = a.request({ kind: 'key_destination', summary: 'x', apply: () => applied++ });
    const dir = path.join(home, APPROVALS_DIR);
    expect((fs.statSync(dir).mode & 0o777).toString(8)).toBe('700');
    const file = path.join(dir, `${c.approvalId}.json`);
    expect((fs.statSync(file).mode & 0o777).toString(8)).toBe('600');
    expect((JSON.parse(fs.readFileSync(file, 'utf8')) as ApprovalFile).status).toBe('pending');
    fs.writeFileSync(path.join(dir, `${c.approvalId}.decision`), 'approve');
    await until(() => settled.length === 1, 'the decision is read');
    expect(applied).toBe(1);
    expect((JSON.parse(fs.readFileSync(file, 'utf8')) as ApprovalFile).status).toBe('approved');
    expect(fs.existsSync(path.join(dir, `${c.approvalId}.decision`))).toBe(false);
  });

  it('a grant is redeemed once, with the secret its refusal carried, for its own kind and subject only', async () => {
    const { a } = approvals();
    const requested: unknown[] = [];
    a.on('requested', (v) => requested.push(v));
    const c = a.request({ kind: 'gateway_key', summary: 'key', subject: 'app' });
    const grant = c.grant!;
    expect(grant).toMatch(/^[A-Za-z0-9_-]{32}$/);
    // What hosts and other sockets hear (the request, the approvals folder) never carries it.
    expect(JSON.stringify(requested)).not.toContain(grant);
    expect(a.redeem(grant, 'gateway_key', 'app')).toBe(false); // not approved yet
    await a.decide(c.code, 'approve', 'test');
    expect(a.redeem(c.approvalId, 'gateway_key', 'app')).toBe(false); // the public id is not the grant
    expect(a.redeem(grant, 'gateway_key', 'other')).toBe(false);
    expect(a.redeem(grant, 'gateway_key', 'app')).toBe(true);
    expect(a.redeem(grant, 'gateway_key', 'app')).toBe(false);
  });

  it('codes are read however they are typed', () => {
    expect(normalizeCode('abcd efgh')).toBe('ABCD-EFGH');
    expect(normalizeCode('ABCDEFGH')).toBe('ABCD-EFGH');
  });
});
