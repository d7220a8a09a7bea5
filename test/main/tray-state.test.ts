// The tray follows the agent's verdict: green only when serving, amber when something served is not well
// (or nothing is served while connected), grey when not connected, red for a refused key; Pause/Resume.
import { describe, expect, it } from 'vitest';
import { verdictOf, type VerdictInputs } from '../../src/core/bridge/verdict';
import { trayView, type TraySnapshot } from '../../src/main/tray-state';
import { knownInputs, servedModel as model } from '../support/verdict-inputs';

function snap(o: Partial<VerdictInputs> = {}): TraySnapshot {
  const i = knownInputs(o);
  return { verdict: verdictOf(i), pause: i.pause };
}

describe('trayView', () => {
  it('shows serving only when the verdict is serving, offering Pause', () => {
    const v = trayView(snap());
    expect(v).toMatchObject({ state: 'serving', icon: 'tray-serving.png', action: 'pause' });
    expect(v.tooltip).toBe('Swan Provider Console: Serving 1 model to the Swan network: routed and earning.');
    expect(trayView({ ...snap(), verdict: verdictOf(knownInputs({ networkName: 'the simulated network' })) }).tooltip).toContain('the simulated network');
  });

  it('never green while a model is down, not earning, or the agent stopped', () => {
    expect(trayView(snap({ models: [model('a', { health: 'unhealthy' })] }))).toMatchObject({ state: 'attention', icon: 'tray-attention.png' });
    expect(trayView(snap({ earningsEnabled: false })).state).toBe('attention');
    expect(trayView(snap({ running: false })).state).toBe('disconnected');
    expect(trayView(snap({ models: [] })).state).toBe('attention');
  });

  it('shows paused (with the reason), offering Resume', () => {
    const v = trayView(snap({ pause: { paused: true, cause: 'manual', reason: 'a game is using the GPU' } }));
    expect(v).toMatchObject({ state: 'paused', icon: 'tray-paused.png', action: 'resume' });
    expect(v.status).toContain('a game is using the GPU');
  });

  it('shows a refused key above everything, telling the owner what to do', () => {
    const v = trayView(snap({ link: { state: 'auth_failed' }, pause: { paused: true, cause: 'manual' } }));
    expect(v).toMatchObject({ state: 'auth_failed', icon: 'tray-auth-failed.png', action: 'resume' });
    expect(v.status).toMatch(/refused your provider key/);
  });

  it('shows disconnected with the reason or the missing key, clipped to what a tray shows', () => {
    expect(trayView(snap({ link: { state: 'backoff', reason: 'hub unreachable, retrying in 8 s' } })).status).toContain('hub unreachable, retrying in 8 s');
    expect(trayView(snap({ hasKey: false, link: { state: 'idle' } })).status).toMatch(/No provider key/);
    const long = trayView(snap({ link: { state: 'backoff', reason: 'x'.repeat(300) } }));
    expect(long.tooltip.length).toBeLessThanOrEqual(120);
    expect(long.status.length).toBeLessThanOrEqual(80);
  });
});
