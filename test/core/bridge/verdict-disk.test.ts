// The verdict's disk findings (issue 43): a full or read-only home disk is said, with its stable code and
// the file that showed it, while requests are still served; beside a stopped verdict it is said too.
import { describe, expect, it } from 'vitest';
import { verdictOf } from '../../../src/core/bridge/verdict';
import { knownInputs as inputs } from '../../support/verdict-inputs';

describe('verdict: the home disk', () => {
  it('a full disk: degraded, disk_full first, naming the file; the model is still routable', () => {
    const v = verdictOf(inputs({ disk: { code: 'disk_full', file: '/home/x/ledger.sqlite' } }));
    expect(v).toMatchObject({ state: 'degraded', label: 'Disk full', routable: ['a'] });
    expect(v.reasons.map((r) => r.code)).toEqual(['disk_full']);
    expect(v.reasons[0]!.text).toContain('/home/x/ledger.sqlite');
    expect(v.reasons[0]!.next).toBeTruthy();
  });

  it('a read-only disk: disk_read_only', () => {
    const v = verdictOf(inputs({ disk: { code: 'disk_read_only', file: '/home/x/logs/agent.jsonl' } }));
    expect(v).toMatchObject({ state: 'degraded', label: 'Disk read-only' });
    expect(v.reasons.map((r) => r.code)).toEqual(['disk_read_only']);
  });

  it('beside a stopped verdict the disk is said after the reason nothing is served', () => {
    const v = verdictOf(inputs({ link: { state: 'backoff', reason: 'gone' }, disk: { code: 'disk_full', file: '/h/ledger.sqlite' } }));
    expect(v.state).toBe('stopped');
    expect(v.reasons.map((r) => r.code)).toEqual(['link_down', 'disk_full']);
  });

  it('no disk problem, no finding', () => {
    expect(verdictOf(inputs()).reasons).toEqual([]);
  });
});
