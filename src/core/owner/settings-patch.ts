// A settings patch from the console, checked field by field before anything is saved: each problem comes
// back under its field with what to type instead.
import type { SettingsPatch } from '../../shared/bridge/schemas';
import { parseSchedule } from '../scheduler/pause-schedule';
import { webhookUrlProblem } from '../alerts/webhook';
import { emailProblem, smtpServerProblem } from '../alerts/email';
import { feedUrlProblem } from '../update/check';

/** Checks a settings patch; returns field -> message for each problem (empty when fine). */
export function validateSettingsPatch(p: SettingsPatch): Record<string, string> {
  const errors: Record<string, string> = {};
  if (p.hubUrl !== undefined && !/^wss?:\/\/[^\s/]+/.test(p.hubUrl)) {
    errors.hubUrl = 'The hub URL must start with ws:// or wss://, for example wss://inference.swanchain.io';
  }
  if (p.serviceUrl !== undefined && p.serviceUrl !== '' && !/^https?:\/\/[^\s/]+/.test(p.serviceUrl)) {
    errors.serviceUrl = 'The service URL must start with http:// or https://';
  }
  if (p.nodeName !== undefined && !/^[\w .-]{1,64}$/.test(p.nodeName)) {
    errors.nodeName = 'Use 1 to 64 letters, digits, spaces, dots, dashes or underscores.';
  }
  if (p.providerKey !== undefined && p.providerKey !== '' && !/^[\w.-]{8,256}$/.test(p.providerKey.trim())) {
    errors.providerKey = 'That does not look like a provider key (expected something like sk-prov-…, without spaces).';
  }
  if (p.gatewayListen !== undefined) {
    const m = /^([^\s:]+):(\d{1,5})$/.exec(p.gatewayListen);
    if (!m || Number(m[2]) < 1 || Number(m[2]) > 65535) errors.gatewayListen = 'Use host:port, for example 127.0.0.1:18080.';
  }
  if (p.pauseSchedule !== undefined) {
    try {
      parseSchedule(p.pauseSchedule);
    } catch (e) {
      errors.pauseSchedule = `${(e as Error).message.replace(/^Invalid pause schedule: /, 'Pause schedule: ')} Each window needs at least one day and times like 22:30.`;
    }
  }
  if (p.retentionDays !== undefined && (p.retentionDays < 1 || p.retentionDays > 3650)) {
    errors.retentionDays = 'Keep history for 1 to 3650 days.';
  }
  if (p.alertWebhookUrl !== undefined) {
    const problem = webhookUrlProblem(p.alertWebhookUrl.trim());
    if (problem) errors.alertWebhookUrl = problem;
  }
  if (p.alertCooldownMinutes !== undefined && (p.alertCooldownMinutes < 1 || p.alertCooldownMinutes > 1440)) {
    errors.alertCooldownMinutes = 'Use 1 to 1440 minutes between alerts of the same kind.';
  }
  if (p.alertEmailTo !== undefined) {
    const problem = emailProblem(p.alertEmailTo.trim());
    if (problem) errors.alertEmailTo = problem;
  }
  if (p.alertSmtpServer !== undefined) {
    const problem = smtpServerProblem(p.alertSmtpServer.trim());
    if (problem) errors.alertSmtpServer = problem;
  }
  if (p.updateFeedUrl !== undefined) {
    const problem = feedUrlProblem(p.updateFeedUrl.trim());
    if (problem) errors.updateFeedUrl = problem;
  }
  return errors;
}
