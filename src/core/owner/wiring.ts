// Alerts: raised from the link, health, pause, provider status and notices; logged, sent to the webhook
// and the console.
import type { EventEmitter } from 'node:events';
import type { BridgeEvent } from '../../shared/bridge/events';
import type { AlertList } from '../alerts/alert-list';
import { noticesFromEmitter } from '../alerts/notice-source';
import { watchForAlerts } from '../alerts/watch';
import type { WebhookTransport } from '../alerts/webhook';
import type { EmailTransport } from '../alerts/email';
import type { HealthMonitor } from '../engine-client/health';
import type { HubLink } from '../hub/link';
import type { NoticeBook } from '../hub/notices';
import type { ProviderGate } from '../hub/provider-status';
import type { AgentLog } from '../base/log';
import type { PauseController } from '../scheduler/pause';

export interface AlertParts {
  link: HubLink;
  health: HealthMonitor;
  pause: PauseController;
  providerGate: ProviderGate;
  notices: NoticeBook;
  /** Self-healing's withdrawals and returns (engines/self-heal.ts). */
  selfHeal?: Pick<EventEmitter, 'on' | 'off'>;
  alerts: AlertList;
  webhook: WebhookTransport;
  email: EmailTransport;
  log: AgentLog;
}

export function wireAlerts(p: AlertParts, event: (e: BridgeEvent) => void): void {
  watchForAlerts(
    {
      link: p.link,
      health: p.health,
      pause: p.pause,
      providerStatus: p.providerGate,
      notices: noticesFromEmitter(p.notices),
      ...(p.selfHeal ? { selfHeal: p.selfHeal } : {}),
    },
    p.alerts,
  );
  const l = p.log.child('alerts');
  p.alerts.on('alert', (alert) => {
    l.warn(`${alert.title}: ${alert.text}`);
    p.webhook.handle(alert);
    p.email.handle(alert);
    event({ type: 'alert', alert });
  });
}
