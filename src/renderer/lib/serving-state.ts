// The one status badge of the link (Dashboard card, sidebar): the hub state, except that a link that is
// up with nothing enabled to serve says so in amber instead of a green "Serving".
import type { AgentSnapshot } from '../../shared/views/snapshot';
import { LINK_LABEL, LINK_TONE } from '../components/Badge';

export type Tone = 'ok' | 'warn' | 'bad' | 'muted' | 'info';

/** Models the hub is told about: switched on and with somewhere to run. */
export function servedModels(s: AgentSnapshot): string[] {
  return s.models.filter((m) => m.enabled && m.endpoints.length > 0).map((m) => m.id);
}

export const NOTHING_TO_SERVE = 'Connected, nothing to serve';

export function linkBadge(s: AgentSnapshot): { label: string; tone: Tone; nothingToServe: boolean } {
  if (s.pause.paused) return { label: 'Paused', tone: 'warn', nothingToServe: false };
  if (s.link.state === 'connected' && servedModels(s).length === 0) return { label: NOTHING_TO_SERVE, tone: 'warn', nothingToServe: true };
  return { label: LINK_LABEL[s.link.state], tone: LINK_TONE[s.link.state], nothingToServe: false };
}
