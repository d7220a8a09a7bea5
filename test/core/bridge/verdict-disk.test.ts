// The verdict's disk findings (issue 43): a full or read-only home disk is said, with its stable code and
// the file that showed it, while requests are still served; beside a stopped verdict it is said too.
import { describe, expect, it } from 'vitest';
import { verdictOf, type VerdictInputs } from '../../../src/core/bridge/verdict';
import type { ModelState } from '../../../src/shared/types';
import type { CatalogueView } from '../../../src/shared/views/snapshot';

const model = (id: string): ModelState => ({
  id,
  enabled: true,
  health: 'healthy',
  endpoints: [{ url: 'http://127.0.0.1:8080', engineType: 'llamacpp', health: 'healthy', inFlight: 0, maxConcurrent: 1, consecutiveFailures: 0 }],
  inFlight: 0,
  queued: 0,
  maxConcurrent: 1,
  maxQueue: 8,
});

// The facts that make routing and pay known (issue 40): a catalogue read that lists the models, a price list that rates them.
const catalogue = (ids: string[]): CatalogueView => ({
  state: 'ok',
  url: 'http://p/api/v1/models',
  fetchedAt: 1,
  size: ids.length,
  models: Object.fromEntries(ids.map((id) => [id, { known: true, source: 'engine' as const, suggestions: [] }])),
});

function inputs(o: Partial<VerdictInputs> = {}): VerdictInputs {
  return { running: true, hasKey: true, hubEnabled: true, link: { state: 'connected' }, pause: { paused: false }, models: [model('a')], catalogue: catalogue(['a']), pricing: { known: true, priced: ['a'] }, earningsEnabled: true, ...o };
}

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
