import type { LinkState, ModelHealth, RequestStatus } from '../../shared/types';

import type { Tone } from '../lib/serving-state';

export type { Tone };

export function Badge({ tone, children, testId }: { tone: Tone; children: React.ReactNode; testId?: string }) {
  return (
    <span className={`badge badge-${tone}`} data-testid={testId}>
      {children}
    </span>
  );
}

const HEALTH_TONE: Record<ModelHealth, Tone> = { healthy: 'ok', degraded: 'warn', unhealthy: 'bad' };

export function HealthBadge({ health, testId }: { health: ModelHealth; testId?: string }) {
  return (
    <Badge tone={HEALTH_TONE[health]} testId={testId}>
      {health}
    </Badge>
  );
}

export const LINK_LABEL: Record<LinkState, string> = {
  idle: 'Not started',
  connecting: 'Connecting',
  registering: 'Registering',
  connected: 'Connected',
  backoff: 'Reconnecting',
  auth_failed: 'Key refused',
  stopped: 'Stopped',
};

export const LINK_TONE: Record<LinkState, Tone> = {
  idle: 'muted',
  connecting: 'info',
  registering: 'info',
  connected: 'ok',
  backoff: 'warn',
  auth_failed: 'bad',
  stopped: 'muted',
};

const STATUS_TONE: Record<RequestStatus, Tone> = { queued: 'muted', running: 'info', ok: 'ok', error: 'bad', cancelled: 'warn', rejected: 'warn' };

export function StatusBadge({ status }: { status: RequestStatus }) {
  return <Badge tone={STATUS_TONE[status]}>{status}</Badge>;
}
