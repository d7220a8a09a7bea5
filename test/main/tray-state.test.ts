// The tray's state, icon, tooltip and Pause/Resume action for each agent state.
import { describe, expect, it } from 'vitest';
import type { AgentSnapshot } from '../../src/shared/bridge';
import type { LinkState } from '../../src/shared/types';
import { trayView } from '../../src/main/tray-state';

function snap(state: LinkState, paused = false, extra: { reason?: string; pauseReason?: string; hasKey?: boolean } = {}) {
  return {
    link: { state, hubUrl: 'wss://hub.example/ws', since: 0, attempts: 0, ...(extra.reason ? { reason: extra.reason } : {}) },
    pause: paused ? { paused: true, cause: 'manual' as const, ...(extra.pauseReason ? { reason: extra.pauseReason } : {}) } : { paused: false },
    hasKey: extra.hasKey ?? true,
  } satisfies Pick<AgentSnapshot, 'link' | 'pause' | 'hasKey'>;
}

describe('trayView', () => {
  it('shows serving when registered and not paused, offering Pause', () => {
    const v = trayView(snap('connected'));
    expect(v).toMatchObject({ state: 'serving', icon: 'tray-serving.png', action: 'pause' });
    expect(v.tooltip).toBe('Swan Provider Console: Serving the Swan network');
  });

  it('shows paused (with the reason) over the link state, offering Resume', () => {
    const v = trayView(snap('connected', true, { pauseReason: 'a game is using the GPU' }));
    expect(v).toMatchObject({ state: 'paused', icon: 'tray-paused.png', action: 'resume', status: 'Paused: a game is using the GPU' });
  });

  it('shows auth failed above everything, telling the owner what to do', () => {
    const v = trayView(snap('auth_failed', true));
    expect(v.state).toBe('auth_failed');
    expect(v.icon).toBe('tray-auth-failed.png');
    expect(v.status).toMatch(/enter a valid key/);
    expect(v.action).toBe('resume');
  });

  it('shows disconnected for every other link state, with the reason or the missing key', () => {
    for (const s of ['idle', 'connecting', 'registering', 'backoff', 'stopped'] as const) {
      expect(trayView(snap(s)).state).toBe('disconnected');
    }
    expect(trayView(snap('backoff', false, { reason: 'hub unreachable, retrying in 8 s' })).status).toBe('Not connected: hub unreachable, retrying in 8 s');
    expect(trayView(snap('idle', false, { hasKey: false })).status).toMatch(/add your provider key/);
    expect(trayView(snap('backoff', false, { reason: 'x'.repeat(300) })).tooltip.length).toBeLessThanOrEqual(120);
  });
});
