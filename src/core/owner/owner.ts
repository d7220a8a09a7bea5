// The owner feature: what only the owner decides and what the owner is told. It holds the changes held for
// the owner's approval (OwnerApprovals), applies a saved settings patch to the parts it concerns (the link,
// the provider gate, the gateway, auto-pause, retention, the platform's figures), decides whether a patch
// needs the owner first (where the provider key would go), and raises the alerts the owner hears of
// (the console, the webhook; the desktop's notifications subscribe).
import type { BridgeEvent } from '../../shared/bridge/events';
import type { OwnerConfirmation } from '../../shared/bridge-error';
import type { SettingsPatch } from '../../shared/bridge/schemas';
import type { SettingsView } from '../../shared/views/settings';
import { BridgeError } from '../../shared/bridge-error';
import { AlertList } from '../alerts/alert-list';
import { DEFAULT_COOLDOWN_MINUTES, WebhookTransport } from '../alerts/webhook';
import { EmailTransport, SMTP_PASSWORD_SECRET } from '../alerts/email';
import type { Lifecycle } from '../base/lifecycle';
import { hubDialUrl } from '../config/config';
import type { OwnerValues } from '../config/owner-values';
import type { AgentLog } from '../base/log';
import type { Accounting } from '../accounting/accounting';
import type { Engines } from '../engines/engines';
import type { Serving } from '../serving/serving';
import { APP_VERSION } from '../base/version';
import { homePath, KEY_SECRET } from '../config/home-layout';
import { Updates } from '../update/updates';
import { OwnerApprovals } from './approvals';
import { checkKeyDestination, keyAfterSave, keyDestinationSummary } from './key-destination';
import { validateSettingsPatch } from './settings-patch';
import { wireAlerts } from './wiring';
import { trustedReleaseKeys } from '../update/signing';

export interface OwnerDeps {
  home: string;
  values: OwnerValues;
  engines: Engines;
  accounting: Accounting;
  serving: Serving;
  /** Where approvals are given: the desktop's dialog, or the agent's terminal and `swan-provider approve`. */
  mode: 'desktop' | 'headless';
  log: AgentLog;
  life: Lifecycle;
  /** A console event (an approval settled, an alert). */
  event: (e: BridgeEvent) => void;
  /** Something the console shows changed. */
  changed: () => void;
}

export type SaveResult = { ok: false; errors: Record<string, string> } | { ok: true; warnings?: Record<string, string> };

export class Owner {
  /** Changes held for the owner's approval: hosts show them (the desktop dialog, the terminal) and decide. */
  readonly approvals: OwnerApprovals;
  /** The one alert list (link down, key refused, engine down, auto-paused, hub notice); transports subscribe. */
  readonly alerts: AlertList;
  readonly webhook: WebhookTransport;
  readonly email: EmailTransport;
  /** Updates on the release channel: checked, downloaded and verified, held while a request is in flight. */
  readonly updates: Updates;

  constructor(private readonly d: OwnerDeps) {
    const { values, log } = d;
    this.alerts = new AlertList((text) => log.redactText(text));
    this.approvals = new OwnerApprovals({ home: d.home, log: log.child('approvals') });
    this.approvals.on('settled', (approval) => d.event({ type: 'approval', approval }));
    this.webhook = new WebhookTransport({
      url: () => values.settings.get().alertWebhookUrl || undefined,
      cooldownMs: () => (values.settings.get().alertCooldownMinutes ?? DEFAULT_COOLDOWN_MINUTES) * 60_000,
      node: () => values.nodeName(),
      log: log.child('alerts'),
    });
    this.email = new EmailTransport({
      to: () => values.settings.get().alertEmailTo || undefined,
      server: () => values.settings.get().alertSmtpServer || undefined,
      password: () => values.secrets.get(SMTP_PASSWORD_SECRET),
      cooldownMs: () => (values.settings.get().alertCooldownMinutes ?? DEFAULT_COOLDOWN_MINUTES) * 60_000,
      node: () => values.nodeName(),
      log: log.child('alerts'),
    });
    const { serving, engines } = d;
    wireAlerts(
      {
        link: serving.link,
        health: engines.health,
        pause: engines.pause,
        providerGate: serving.providerGate,
        notices: serving.notices,
        selfHeal: engines.selfHeal,
        alerts: this.alerts,
        webhook: this.webhook,
        email: this.email,
        log,
      },
      d.event,
    );
    this.updates = new Updates({
      dir: homePath(d.home, 'updates'),
      mode: d.mode,
      current: APP_VERSION,
      feed: () => values.settings.get().updateFeedUrl ?? '',
      inFlight: () => engines.scheduler.inFlight(),
      drained: () => engines.scheduler.drained(),
      log: log.child('update'),
      // The desktop app downloads in the background; the console asks first on a headless agent.
      autoDownload: d.mode === 'desktop',
      keys: trustedReleaseKeys(values.config.agent.releaseSigningKeys),
    });
    this.updates.on('download', (download) => d.event({ type: 'update.download', download }));
    this.wireUpgradeAdvice();
    d.life.onStop('updates', () => this.updates.close());
    d.life.onStop('approvals', () => this.approvals.close());
    d.life.add({ name: 'held provider key', start: () => this.askForHeldKey() });
  }

  /**
   * The key in use would reach a host nobody allowed it to (the environment's key changed, or config.toml
   * did, under addresses set in the console): it is held (OwnerValues.providerKey) and the owner asked.
   */
  askForHeldKey(): void {
    const { values, serving } = this.d;
    const held = values.keyHeld();
    if (held.length === 0) return;
    const key = values.keyInUse();
    const hosts = values.keyHosts();
    this.approvals.request({
      kind: 'key_destination',
      summary: keyDestinationSummary({ hosts: held, insecure: [] }),
      hosts: held,
      insecure: [],
      apply: () => {
        values.destinations?.approve(key, hosts);
        if (values.config.enable && values.providerKey()) void serving.providerGate.start();
      },
    });
  }

  /** The settings as the console shows them: the overlay over config.toml, and where the key is kept. */
  /**
   * The hub's `upgrade_available` leads to the release channel: checked once per advised version, and the
   * owner told where it stands and what to run (the console's Settings → About shows the same).
   */
  private wireUpgradeAdvice(): void {
    const { serving, mode, log } = this.d;
    const l = log.child('update');
    let asked = '';
    serving.hubView.on('change', () => {
      const up = serving.hubView.view().upgrade;
      const key = up ? `${up.latest ?? ''}|${up.message ?? ''}` : '';
      if (!up || key === asked) return;
      asked = key;
      void this.updates.check().then((v) => {
        const where =
          mode === 'headless'
            ? 'run `swan-provider update` (downloads and verifies it; nothing is installed for you), or open Settings → About in the console'
            : 'open Settings → About';
        if (v.code === 'update_available')
          l.warn(`the hub advises an upgrade, and version ${v.latest} is on the release channel: ${where}`, { code: 'update_available' });
        else if (v.code === 'update_up_to_date')
          l.info(`the hub advises an upgrade, but the release channel has nothing newer than ${v.current} yet`, { code: 'update_up_to_date' });
        else l.warn(`the hub advises an upgrade; ${v.error ?? 'the release channel could not be read'}`, { code: 'update_check_failed' });
      });
    });
  }

  settingsView(): SettingsView {
    const { values } = this.d;
    const { config } = values;
    const s = values.settings.get();
    return {
      hubUrl: values.hubUrl(),
      serviceUrl: s.serviceUrl ?? config.serviceUrl,
      nodeName: values.nodeName(),
      keySet: values.keyInUse() !== '',
      keyStorage: values.keyStorage(),
      gatewayEnabled: s.gatewayEnabled ?? config.gateway.enable,
      gatewayListen: s.gatewayListen ?? config.gateway.listen,
      startAtLogin: s.startAtLogin ?? false,
      closeToTray: s.closeToTray ?? true,
      theme: s.theme ?? 'system',
      autoPauseOnGpuBusy: s.autoPauseOnGpuBusy ?? false,
      gpuTemperatureCeilingC: s.gpuTemperatureCeilingC ?? config.agent.gpuTemperatureCeilingC,
      gpuPowerCeilingW: s.gpuPowerCeilingW ?? config.agent.gpuPowerCeilingW,
      pauseSchedule: s.pauseSchedule ?? [],
      retentionDays: s.retentionDays ?? 365,
      alertWebhookUrl: s.alertWebhookUrl ?? '',
      alertCooldownMinutes: s.alertCooldownMinutes ?? DEFAULT_COOLDOWN_MINUTES,
      alertEmailTo: s.alertEmailTo ?? '',
      alertSmtpServer: s.alertSmtpServer ?? '',
      alertSmtpPasswordSet: (values.secrets.get(SMTP_PASSWORD_SECRET) ?? '') !== '',
      desktopNotifications: s.desktopNotifications ?? true,
      updateFeedUrl: s.updateFeedUrl ?? '',
      addedEndpoints: (s.extraEndpoints ?? []).map((e) => e.url),
    };
  }

  /**
   * Saves a patch: checked field by field; when it would send a saved provider key somewhere new (or in
   * the clear), held for the owner (OWNER_CONFIRMATION_REQUIRED) unless the key is typed again with it.
   */
  async saveSettings(patch: SettingsPatch): Promise<SaveResult> {
    const errors = validateSettingsPatch(patch);
    if (Object.keys(errors).length > 0) return { ok: false, errors };
    const { values } = this.d;
    const env = values.env.INFERENCE_API_KEY ?? '';
    const key = keyAfterSave({ env, stored: values.secrets.get(KEY_SECRET) ?? '', config: values.config.apiKey }, patch.providerKey);
    const current = this.settingsView();
    const destination = checkKeyDestination({ current, patch, ...key, approved: (host) => values.keyApproved(key.keyAfter, host) });
    const warnings = Object.keys(destination.warnings).length ? { warnings: destination.warnings } : {};
    // The hosts the key goes to after this save: the owner's word (typed key, approval) covers that key there.
    const hostsAfter = values.hostsOf(patch.hubUrl || current.hubUrl, patch.serviceUrl === undefined ? current.serviceUrl : patch.serviceUrl);
    const allow = () => values.destinations?.approve(key.keyAfter, hostsAfter);
    if (destination.needsOwner) {
      const summary = keyDestinationSummary(destination);
      const confirmation = this.approvals.request({
        kind: 'key_destination',
        summary,
        hosts: destination.hosts,
        insecure: destination.insecure,
        apply: async () => {
          allow();
          await this.applySettings(patch);
        },
      });
      throw new BridgeError(
        'OWNER_CONFIRMATION_REQUIRED',
        `${summary} Only you can allow this: type the provider key again with the change, or ${this.approveWhere(confirmation)}.`,
        undefined,
        confirmation,
      );
    }
    if (key.keyTyped) allow();
    await this.applySettings(patch);
    return { ok: true, ...warnings };
  }

  /**
   * A credential is minted only with the owner's approval, given outside the console: the first call is refused
   * with the approval to give; the call that follows it (with the approval's id) goes through, once.
   */
  requireOwner(kind: 'gateway_key' | 'fleet_token' | 'payout_address', name: string, grant: string | undefined, summary: string): void {
    if (grant !== undefined && this.approvals.redeem(grant, kind, name)) return;
    const confirmation = this.approvals.request({ kind, summary, subject: name });
    throw new BridgeError(
      'OWNER_CONFIRMATION_REQUIRED',
      `${summary} Only you can allow this: ${this.approveWhere(confirmation)}; then ${kind === 'payout_address' ? 'save' : 'create'} it again.`,
      grant === undefined ? undefined : 'grant',
      confirmation,
    );
  }

  /** Where the owner approves, in the refusal's words. */
  approveWhere(c: OwnerConfirmation): string {
    return this.d.mode === 'desktop'
      ? 'approve it in the dialog the app shows'
      : `approve it where the agent runs: \`${c.approveCommand}\`, or type "approve ${c.code}" in its terminal`;
  }

  /** Applies a validated settings patch (at once, or when the owner approved it) to the parts it concerns. */
  private async applySettings(patch: SettingsPatch): Promise<void> {
    const { values, serving, accounting, log } = this.d;
    const { link, providerGate } = serving;
    const { providerKey, alertSmtpPassword, ...rest } = patch;
    values.settings.update((s) => ({ ...s, ...rest }));
    // The SMTP password goes where the provider key goes (the secret store), never into settings.json.
    if (alertSmtpPassword !== undefined) {
      if (alertSmtpPassword === '') values.secrets.delete(SMTP_PASSWORD_SECRET);
      else {
        values.secrets.set(SMTP_PASSWORD_SECRET, alertSmtpPassword);
        log.addSecrets([alertSmtpPassword]);
      }
    }
    if (providerKey !== undefined) {
      if (providerKey === '') values.secrets.delete(KEY_SECRET);
      else {
        values.secrets.set(KEY_SECRET, providerKey.trim());
        log.addSecrets([providerKey.trim()]);
      }
    }
    if (rest.hubUrl !== undefined) link.setUrl(hubDialUrl(values.standIns.hubUrl(rest.hubUrl)).url);
    if (providerKey !== undefined) {
      // A new key is checked with the platform first (provider status), then the link starts.
      if (link.state.state === 'idle') void providerGate.check();
      else {
        link.reconnect('the provider key changed');
        void providerGate.check();
      }
    } else if (rest.nodeName !== undefined) {
      link.reRegister();
    }
    if (rest.retentionDays !== undefined) accounting.ledger?.prune(rest.retentionDays);
    if (rest.autoPauseOnGpuBusy !== undefined) serving.gpuBusy.apply();
    if (rest.gpuTemperatureCeilingC !== undefined || rest.gpuPowerCeilingW !== undefined) serving.gpuGuard.apply();
    if (rest.pauseSchedule !== undefined) serving.applyPauseSchedule();
    if (rest.gatewayEnabled !== undefined || rest.gatewayListen !== undefined) await serving.applyGateway();
    // A new key is checked by the provider gate above, whose status carries earnings_enabled (serving's wiring).
    if (providerKey === undefined && rest.serviceUrl !== undefined) void accounting.refreshEarningsFlag();
    if (rest.serviceUrl !== undefined) {
      accounting.catalogueRefresh.run();
      // The price list is the new network's too: read now, not when the old network's answer expires.
      void accounting.earnings.rates.get(true);
    }
    this.d.changed();
  }
}
