// Alerts as both sides see them: one event list in core (src/core/alerts), pushed to the UI as the
// `alert` bridge event and to every transport (desktop notification, browser notification, webhook).
export type AlertKind =
  | 'link_down'
  | 'key_refused'
  | 'engine_down'
  | 'auto_paused'
  | 'hub_notice'
  | 'rig_unreachable'
  | 'test'
  // Self-healing and recovery: an engine answering again, a model withdrawn from the hub and back.
  | 'engine_back'
  | 'model_withdrawn'
  | 'model_back';

export const ALERT_KINDS: readonly AlertKind[] = [
  'link_down',
  'key_refused',
  'engine_down',
  'auto_paused',
  'hub_notice',
  'rig_unreachable',
  'test',
  'engine_back',
  'model_withdrawn',
  'model_back',
];

export interface Alert {
  id: string;
  kind: AlertKind;
  ts: number; // epoch ms
  /** Short line, e.g. "Hub connection lost". */
  title: string;
  /** What happened and what to do, plain words. */
  text: string;
}

export interface AlertTestResult {
  /** 'off' when no webhook URL is set. */
  webhook: 'sent' | 'failed' | 'off';
  /** The receiver's HTTP status, or why the call failed. */
  detail?: string;
  /** Absent when no e-mail address or SMTP server is set (src/core/alerts/email.ts). */
  email?: 'sent' | 'failed';
  emailDetail?: string;
}
