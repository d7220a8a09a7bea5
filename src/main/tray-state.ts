// What the tray shows for an agent snapshot: the state, its icon, tooltip and menu labels. Pure.
import type { AgentSnapshot } from '../shared/bridge';

export type TrayState = 'serving' | 'paused' | 'disconnected' | 'auth_failed';

export interface TrayView {
  state: TrayState;
  /** File name in resources/ (an @2x variant sits beside it). */
  icon: string;
  tooltip: string;
  /** First, disabled line of the menu. */
  status: string;
  /** Which of Pause / Resume the menu offers. */
  action: 'pause' | 'resume';
}

const TITLE = 'Swan Provider Console';

export function trayStateOf(s: Pick<AgentSnapshot, 'link' | 'pause'>): TrayState {
  if (s.link.state === 'auth_failed') return 'auth_failed';
  if (s.pause.paused) return 'paused';
  if (s.link.state === 'connected') return 'serving';
  return 'disconnected';
}

function statusText(s: Pick<AgentSnapshot, 'link' | 'pause' | 'hasKey'>, state: TrayState): string {
  switch (state) {
    case 'serving':
      return 'Serving the Swan network';
    case 'paused':
      return s.pause.reason ? `Paused: ${s.pause.reason}` : 'Paused';
    case 'auth_failed':
      return 'The hub refused the provider key: open the app and enter a valid key';
    case 'disconnected':
      if (!s.hasKey) return 'Not connected: open the app and add your provider key';
      return s.link.reason ? `Not connected: ${s.link.reason}` : 'Not connected';
  }
}

export function trayView(s: Pick<AgentSnapshot, 'link' | 'pause' | 'hasKey'>): TrayView {
  const state = trayStateOf(s);
  const status = statusText(s, state);
  const tooltip = `${TITLE}: ${status}`;
  return {
    state,
    icon: `tray-${state.replace('_', '-')}.png`,
    // Some desktops cut long tooltips; keep it readable.
    tooltip: tooltip.length > 120 ? `${tooltip.slice(0, 119)}…` : tooltip,
    status: status.length > 80 ? `${status.slice(0, 79)}…` : status,
    action: s.pause.paused ? 'resume' : 'pause',
  };
}
