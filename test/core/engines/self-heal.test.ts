// Self-healing (Go's selfcheck_runner.go and alert_monitor.go): a model withdrawn after N failed real probes in a
// row or >= 50 % failed requests over >= 10 while its health reads fine, and announced again once a probe passes.
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { SelfHeal, type SelfHealChange } from '../../../src/core/engines/self-heal';
import { AlertList } from '../../../src/core/alerts/alert-list';
import { watchForAlerts } from '../../../src/core/alerts/watch';
import type { ModelHealth } from '../../../src/shared/types';

function heal(o: { health?: ModelHealth; holdMs?: number } = {}) {
  let now = 1_000_000;
  const h = new SelfHeal({
    failures: 3,
    errorRate: 0.5,
    minRequests: 10,
    windowMs: 600_000,
    holdMs: o.holdMs ?? 300_000,
    health: () => o.health ?? 'healthy',
    now: () => now,
  });
  const changes: SelfHealChange[] = [];
  h.on('change', (c) => changes.push(c));
  return { h, changes, advance: (ms: number) => (now += ms) };
}

describe('self-heal', () => {
  it('withdraws after 3 backend-owned probe failures in a row, and puts the model back when one passes', () => {
    const { h, changes } = heal();
    h.probe('m', false, 'engine_error', 'answered 500');
    h.probe('m', false, 'engine_error', 'answered 500');
    h.probe('m', true); // a pass in between resets the count
    h.probe('m', false, 'no_response');
    h.probe('m', false, 'engine_error');
    expect(h.isWithdrawn('m')).toBe(false);
    h.probe('m', false, 'not_served', 'answered 404');
    expect(h.withdrawals()).toEqual([
      expect.objectContaining({ model: 'm', reason: 'probe_failures', detail: expect.stringContaining('3 real probes in a row failed (not_served)') }),
    ]);
    h.probe('m', true);
    expect(h.isWithdrawn('m')).toBe(false);
    expect(changes.map((c) => [c.model, c.withdrawn, c.reason])).toEqual([
      ['m', true, 'probe_failures'],
      ['m', false, 'probe_failures'],
    ]);
  });

  it("never counts what is not the backend's fault (400, 422, 429 pass as ok; an unknown code)", () => {
    const { h } = heal();
    for (let i = 0; i < 5; i++) h.probe('m', false, 'loading');
    expect(h.isWithdrawn('m')).toBe(false);
  });

  it('withdraws a healthy-reading model at >= 50 % failed over >= 10 requests, and only after the hold does a passing probe put it back', () => {
    const { h, changes, advance } = heal({ holdMs: 60_000 });
    for (let i = 0; i < 9; i++) h.request('m', i % 2 === 0);
    expect(h.isWithdrawn('m')).toBe(false); // 5 of 9: below the floor of 10
    h.request('m', false);
    expect(h.withdrawals()).toEqual([
      expect.objectContaining({ reason: 'error_rate', detail: '5 of 10 requests failed (50 %) while its health checks passed' }),
    ]);
    h.probe('m', true);
    expect(h.isWithdrawn('m')).toBe(true); // its probes passed all along: the hold comes first
    advance(60_000);
    h.probe('m', true);
    expect(h.isWithdrawn('m')).toBe(false);
    expect(changes.map((c) => c.withdrawn)).toEqual([true, false]);
  });

  it('leaves an unhealthy model to the health check, forgets requests outside the window, and forgets models no longer served', () => {
    const sick = heal({ health: 'unhealthy' });
    for (let i = 0; i < 20; i++) sick.h.request('m', true);
    expect(sick.h.isWithdrawn('m')).toBe(false);
    const { h, advance } = heal();
    for (let i = 0; i < 9; i++) h.request('m', true);
    advance(600_001);
    h.request('m', true);
    expect(h.isWithdrawn('m')).toBe(false);
    for (let i = 0; i < 3; i++) h.probe('x', false, 'engine_error');
    expect(h.isWithdrawn('x')).toBe(true);
    h.retain(['m']);
    expect(h.isWithdrawn('x')).toBe(false);
  });
});

describe('self-heal and recovery alerts', () => {
  it('model withdrawn and model back, engine back after engine down (never for an engine never reported down)', () => {
    const list = new AlertList();
    const health = new EventEmitter();
    const { h } = heal();
    watchForAlerts({ link: new EventEmitter(), health, pause: new EventEmitter(), selfHeal: h }, list);
    health.emit('change', { url: 'http://127.0.0.1:1', health: 'healthy' });
    health.emit('change', { url: 'http://127.0.0.1:1', health: 'unhealthy', error: 'refused' });
    health.emit('change', { url: 'http://127.0.0.1:1', health: 'healthy' });
    for (let i = 0; i < 3; i++) h.probe('m', false, 'engine_error', 'answered 500');
    h.probe('m', true);
    expect(
      list
        .list()
        .map((a) => a.kind)
        .reverse(),
    ).toEqual(['engine_down', 'engine_back', 'model_withdrawn', 'model_back']);
    expect(list.list()[1]!.text).toMatch(/^m was withdrawn from the hub because its real probes kept failing/);
  });
});
