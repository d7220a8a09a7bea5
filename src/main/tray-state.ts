// What the tray shows for an agent snapshot: the agent's verdict as its state, icon, tooltip and first menu
// line, and Pause or Resume. Pure.
import type { AgentSnapshot } from '../shared/views/snapshot';

export type TrayState = 'serving' | 'attention' | 'paused' | 'disconnected' | 'auth_failed';

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

export type TraySnapshot = Pick<AgentSnapshot, 'verdict' | 'pause'>;

const TITLE = 'Swan Provider Console';

/** Green only when the verdict is serving; amber when something served is not well; grey when nothing is. */
export function trayStateOf(s: TraySnapshot): TrayState {
  const v = s.verdict;
  if (v.state === 'serving') return 'serving';
  if (v.state !== 'stopped') return 'attention';
  const code = v.reasons[0]?.code;
  if (code === 'key_refused') return 'auth_failed';
  if (code === 'paused') return 'paused';
  if (code === 'nothing_to_serve' || code === 'none_switched_on' || code === 'awaiting_approval') return 'attention';
  return 'disconnected';
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

export function trayView(s: TraySnapshot): TrayView {
  const state = trayStateOf(s);
  // The verdict's headline names the network served (the demo's is a simulated one).
  const status = s.verdict.headline;
  return {
    state,
    icon: `tray-${state.replace('_', '-')}.png`,
    // Some desktops cut long tooltips; keep it readable.
    tooltip: clip(`${TITLE}: ${status}`, 120),
    status: clip(status, 80),
    action: s.pause.paused ? 'resume' : 'pause',
  };
}
