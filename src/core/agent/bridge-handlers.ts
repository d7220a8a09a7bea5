// The bridge verbs: each validates its arguments with the shared schemas and answers with plain data.
// An invalid call is refused with a message that names the channel and the problem.
import { isInvokeChannel, type InvokeChannel, type InvokeResults } from '../../shared/bridge/channels';
import { invokeSchemas, type InvokeArgs, type SettingsPatch } from '../../shared/bridge/schemas';
import type { SettingsView } from '../../shared/views/settings';
import type { PriceRow, PricesView, UsageReport } from '../../shared/views/usage';
import type { UsageTotals } from '../../shared/types';
import type { AgentActions, AgentParts } from './parts';
import { checkProviderKey } from '../hub/provider-status';
import { KEY_SECRET } from '../config/home-layout';
import { DEFAULT_COOLDOWN_MINUTES } from '../alerts/webhook';
import { hubDialUrl } from '../config/config';
import { validateSettingsPatch } from './settings';
import { checkKeyDestination, keyAfterSave, keyDestinationSummary } from './key-destination';
import { endpointKey, ownerEndpointUrl } from '../engine/url';
import { classifyHost } from '../http/address-class';
import { listGpuProcesses } from '../gpu/processes';
import { checkForUpdate } from '../update/check';
import { appInfo, modelReport, startTestPrompt } from './console-extras';
import { formatIssues, issueField } from '../../shared/zod-issues';
import { BridgeError, type OwnerConfirmation } from '../../shared/bridge-error';
import { toBridgeError } from './bridge-errors';
import { LedgerValueError } from '../ledger/db-errors';
import { fleetVerbs } from '../fleet/fleet-verbs';

/** What the bridge verbs use of the agent: its parts and a few of its actions, nothing else. */
export type BridgeDeps = Pick<
  AgentParts & AgentActions,
  'alerts'
  | 'applyGateway'
  | 'approvals'
  | 'applyPauseSchedule'
  | 'book'
  | 'config'
  | 'earnings'
  | 'emitSnapshot'
  | 'engineList'
  | 'forgetEngine'
  | 'fleet'
  | 'gatewayKeys'
  | 'gpuHistory'
  | 'keyStorage'
  | 'ledger'
  | 'link'
  | 'log'
  | 'nodeName'
  | 'notices'
  | 'opts'
  | 'pause'
  | 'providerGate'
  | 'providerKey'
  | 'rebuildModels'
  | 'refreshCatalogue'
  | 'refreshEarningsFlag'
  | 'registry'
  | 'requestText'
  | 'rescanEngines'
  | 'runner'
  | 'sampler'
  | 'secrets'
  | 'settings'
  | 'snapshot'
  | 'standIns'
  | 'warmup'
  | 'watchGpuBusy'
  | 'webhook'
>;

/** A channel's handler: its arguments are what the channel's schema parsed (checked once, in invoke()). */
type Handler<C extends InvokeChannel> = (args: InvokeArgs<C>) => Promise<InvokeResults[C]> | InvokeResults[C];

const EMPTY_TOTALS: UsageTotals = { requests: 0, errors: 0, tokensIn: 0, tokensOut: 0, earnings: 0 };

export class BridgeHandlers {
  private readonly table: { [C in InvokeChannel]: Handler<C> };

  constructor(private readonly agent: BridgeDeps) {
    const a = agent;
    this.table = {
      ...fleetVerbs(a.fleet, a.log, (name, approvalId) =>
        this.requireOwner('fleet_token', name, approvalId, `Create the fleet token "${name}": whoever holds it can read this rig's figures (models, requests, earnings) until you revoke it.`),
      ),
      'snapshot.get': () => a.snapshot(),
      'models.setEnabled': ({ model, enabled }) => {
        if (!a.registry.get(model)) throw new BridgeError('not_found', `No model "${model}" is known here. Rescan engines or add it to models.json.`);
        a.settings.update((s) => ({ ...s, models: { ...s.models, [model]: { ...s.models?.[model], enabled } } }));
        a.rebuildModels();
        return a.snapshot().models;
      },
      'models.warmup': ({ model }) => a.warmup.run(model),
      'models.setLimits': ({ model, maxConcurrent, maxQueue }) => {
        if (!a.registry.get(model)) throw new BridgeError('not_found', `No model "${model}" is known here.`);
        a.settings.update((s) => ({ ...s, models: { ...s.models, [model]: { ...s.models?.[model], maxConcurrent, maxQueue } } }));
        a.rebuildModels();
        return a.snapshot().models;
      },
      'serving.pause': ({ reason }) => {
        a.pause.pauseManual(reason);
        return a.pause.state();
      },
      'serving.resume': () => {
        a.pause.resumeManual();
        return a.pause.state();
      },
      'settings.get': () => this.settingsView(),
      'settings.save': async ({ patch }) => {
        const errors = validateSettingsPatch(patch);
        if (Object.keys(errors).length > 0) return { ok: false as const, errors };
        const env = (a.opts.env ?? process.env).INFERENCE_API_KEY ?? '';
        const key = keyAfterSave({ env, stored: a.secrets.get(KEY_SECRET) ?? '', config: a.config.apiKey }, patch.providerKey);
        const destination = checkKeyDestination({ current: this.settingsView(), patch, ...key });
        const warnings = Object.keys(destination.warnings).length ? { warnings: destination.warnings } : {};
        if (destination.needsOwner) {
          const summary = keyDestinationSummary(destination);
          const confirmation = a.approvals.request({
            kind: 'key_destination',
            summary,
            hosts: destination.hosts,
            insecure: destination.insecure,
            apply: () => this.applySettings(patch),
          });
          throw new BridgeError(
            'OWNER_CONFIRMATION_REQUIRED',
            `${summary} Only you can allow this: type the provider key again with the change, or ${this.approveWhere(confirmation)}.`,
            undefined,
            confirmation,
          );
        }
        await this.applySettings(patch);
        return { ok: true as const, ...warnings };
      },
      'settings.checkKey': ({ key }) => checkProviderKey(a.standIns.serviceUrl(this.settingsView().serviceUrl), key),
      'requests.list': ({ limit }) => a.book.list(limit ?? 500),
      'requests.text': ({ id }) => a.requestText(id),
      'usage.report': ({ from, to, bucket }): UsageReport =>
        a.ledger?.report(from, to, bucket) ?? { from, to, totals: EMPTY_TOTALS, buckets: [], perModel: [], errorRate: 0 },
      'usage.exportCsv': ({ from, to }) => {
        if (!a.ledger) throw new BridgeError('unavailable', 'The usage history is unavailable right now (see Logs).');
        return a.ledger.exportCsv(from, to);
      },
      'earnings.overview': ({ refresh }) => a.earnings.overview(refresh ?? false),
      'earnings.setElectricity': ({ perKwh, currency, usdPerUnit }) => {
        if (!a.ledger) throw new BridgeError('unavailable', 'The usage history is unavailable right now (see Logs), so the electricity price cannot be saved.');
        const cur = currency ?? 'USD';
        if (perKwh !== null && cur !== 'USD' && usdPerUnit === undefined) throw new BridgeError('invalid_args', `Give the value of 1 ${cur} in USD too, so power cost and earnings (paid in USD) can be compared.`);
        try {
          a.ledger.setElectricityPrice(perKwh === null ? null : { perKwh, currency: cur, usdPerUnit: cur === 'USD' ? 1 : (usdPerUnit ?? 1) });
        } catch (e) {
          throw e instanceof LedgerValueError ? new BridgeError('invalid_args', e.message, e.field) : new BridgeError('failed', `The electricity price could not be saved: ${(e as Error).message}`);
        }
        a.emitSnapshot();
        return a.earnings.overview();
      },
      'demand.list': () => a.earnings.demand(),
      'demand.pull': ({ engineUrl, model, networkId }) => a.earnings.pull(engineUrl, model, networkId),
      'demand.serve': ({ modelId }) => a.earnings.serve(modelId),
      'engines.rescan': async () => {
        await a.rescanEngines();
        return a.engineList();
      },
      'engines.addEndpoint': async ({ url, model }) => {
        let base: string;
        try {
          base = ownerEndpointUrl(url);
        } catch (e) {
          throw new BridgeError('invalid_args', (e as Error).message);
        }
        // Checked before anything is sent there: an address outside this machine and the owner's network
        // needs the owner; link-local and cloud-metadata ranges are never probed (a blind SSRF otherwise).
        const host = new URL(base).hostname;
        const where = await classifyHost(host);
        if (where === 'refused') {
          throw new BridgeError('address_refused', `${host} is a link-local, cloud-metadata or unspecified address; no engine is added there. Use the engine's address on this machine (127.0.0.1) or your network.`, 'url');
        }
        const add = () => this.addEndpoint(base, model);
        if (where === 'public') {
          const summary = `Add the engine endpoint ${base}: the agent will send it requests (and the prompts in them), outside this machine and your local network.`;
          const confirmation = a.approvals.request({ kind: 'engine_endpoint', summary, hosts: [new URL(base).host], apply: add });
          throw new BridgeError('OWNER_CONFIRMATION_REQUIRED', `${summary} Only you can allow this: ${this.approveWhere(confirmation)}.`, 'url', confirmation);
        }
        return add();
      },
      'engines.removeEndpoint': async ({ url }) => {
        const a = this.agent;
        const key = endpointKey(url.trim());
        const added = a.settings.get().extraEndpoints ?? [];
        if (!added.some((e) => endpointKey(e.url) === key)) {
          throw new BridgeError('not_found', `${key} was not added in the console, so it cannot be removed here. Addresses from config.toml (EngineHosts) or models.json are removed there.`, 'url');
        }
        a.settings.update((s) => ({ ...s, extraEndpoints: (s.extraEndpoints ?? []).filter((e) => endpointKey(e.url) !== key) }));
        a.forgetEngine(key);
        await a.rescanEngines();
        return a.engineList();
      },
      'gpu.history': ({ minutes }) => a.sampler?.history(minutes) ?? [],
      'gpu.processes': async () => {
        try {
          return await listGpuProcesses({ env: a.opts.env ?? process.env });
        } catch (e) {
          throw new BridgeError('unavailable', `The GPU process list is unavailable: ${(e as Error).message}`);
        }
      },
      'logs.list': ({ level, limit }) => a.log.entries(limit ?? 500, level ?? 'debug'),
      'logs.bundle': () => this.supportBundle(),
      'gateway.keys.list': () => a.gatewayKeys.list(),
      'gateway.keys.create': ({ name, approvalId }) => {
        // A gateway key is a credential to this machine's engines: minted only with the owner's approval,
        // given outside the console; the call that follows it (with the approval's id) gets the key, once.
        if (a.gatewayKeys.list().some((k) => k.name === name)) throw new BridgeError('already_exists', `A key named "${name}" already exists; revoke it first or pick another name.`);
        this.requireOwner('gateway_key', name, approvalId, `Create the gateway key "${name}": whoever holds it can run requests on this machine's engines through the local gateway.`);
        const k = a.gatewayKeys.create(name);
        a.emitSnapshot();
        return k;
      },
      'gateway.keys.revoke': ({ name }) => {
        if (!a.gatewayKeys.revoke(name)) throw new BridgeError('not_found', `No gateway key named "${name}".`);
        a.emitSnapshot();
        return a.gatewayKeys.list();
      },
      'prices.list': () => this.prices(),
      'prices.set': ({ model, inputPerM, outputPerM }) => {
        if (!a.ledger) throw new BridgeError('unavailable', 'The usage history is unavailable right now (see Logs), so prices cannot be saved.');
        a.ledger.setPrice(model, inputPerM, outputPerM);
        a.emitSnapshot();
        return this.prices();
      },
      'notices.list': () => a.notices.list(),
      'providerStatus.refresh': () => a.providerGate.check(),
      'alerts.list': () => a.alerts.list(),
      'alerts.test': async () => {
        const alert = a.alerts.raise('test', 'Test alert', 'This is a test alert from Swan Provider Console. If you see it, alerts reach you.');
        return await a.webhook.send(alert);
      },
      'models.try': ({ model, prompt, maxTokens }) => startTestPrompt(a, model, prompt, maxTokens ?? 128),
      'update.check': () => checkForUpdate({ current: a.snapshot().version, feed: a.settings.get().updateFeedUrl ?? '', mode: a.opts.mode ?? 'headless' }),
      // Downloads are the desktop app's (src/main/updater.ts answers these there); headless installs with npm.
      'update.download': () => {
        throw new BridgeError('not_supported', 'Downloading updates is only in the desktop app. Install the new version with npm, then restart the agent.');
      },
      'update.install': () => {
        throw new BridgeError('not_supported', 'Installing updates is only in the desktop app. Install the new version with npm, then restart the agent.');
      },
      'app.info': () => appInfo(a.snapshot().version, a.opts.mode ?? 'headless'),
      'gpu.longHistory': ({ hours }: { hours: number }) => a.gpuHistory?.since(Date.now() - hours * 3_600_000) ?? [],
      'usage.model': ({ model, hours }: { model: string; hours: number }) => modelReport(a, model, hours),
      'link.retry': () => {
        a.link.retryNow();
        return a.link.state;
      },
      // Browser sessions live in the console server, which answers these itself; the desktop app has none.
      'console.sessions': () => [],
      'console.signOut': () => ({ ended: 0 }),
      'onboarding.complete': () => {
        if (!a.providerKey()) throw new BridgeError('not_ready', 'Paste your provider key first.');
        a.settings.update((s) => ({ ...s, onboarded: true }));
        const snap = a.snapshot();
        a.emitSnapshot();
        return snap;
      },
    };
  }

  async invoke(channel: string, args: unknown): Promise<unknown> {
    if (!isInvokeChannel(channel)) throw new BridgeError('unknown_channel', `Unknown request "${String(channel).slice(0, 64)}".`);
    const parsed = invokeSchemas[channel].safeParse(args ?? {});
    if (!parsed.success) {
      const detail = formatIssues(parsed.error, { root: 'arguments' });
      throw new BridgeError('invalid_args', `Invalid arguments for ${channel}: ${detail}`, issueField(parsed.error));
    }
    const handler = this.table[channel] as (a: unknown) => unknown;
    try {
      return await handler(parsed.data);
    } catch (e) {
      throw toBridgeError(e);
    }
  }

  /** Where the owner approves, in the refusal's words. */
  /**
   * A credential is minted only with the owner's approval, given outside the console: the first call is refused
   * with the approval to give; the call that follows it (with the approval's id) goes through, once.
   */
  private requireOwner(kind: 'gateway_key' | 'fleet_token', name: string, approvalId: string | undefined, summary: string): void {
    if (approvalId !== undefined && this.agent.approvals.redeem(approvalId, kind, name)) return;
    const confirmation = this.agent.approvals.request({ kind, summary, subject: name });
    throw new BridgeError(
      'OWNER_CONFIRMATION_REQUIRED',
      `${summary} Only you can allow this: ${this.approveWhere(confirmation)}; then create it again.`,
      approvalId === undefined ? undefined : 'approvalId',
      confirmation,
    );
  }

  private approveWhere(c: OwnerConfirmation): string {
    return this.agent.opts.mode === 'desktop' ? 'approve it in the dialog the app shows' : `approve it where the agent runs: \`${c.approveCommand}\`, or type "approve ${c.code}" in its terminal`;
  }

  /** Adds an engine endpoint the owner named and probes it (at once, or when the owner approved it). */
  private async addEndpoint(base: string, model: string | undefined) {
    const a = this.agent;
    a.settings.update((s) => ({ ...s, extraEndpoints: [...(s.extraEndpoints ?? []).filter((e) => e.url !== base), { url: base, ...(model ? { model } : {}) }] }));
    await a.rescanEngines([base]);
    // The owner named the model to serve from it: switch it on when the engine offers it.
    if (model && a.registry.get(model)) {
      a.settings.update((s) => ({ ...s, models: { ...s.models, [model]: { ...s.models?.[model], enabled: true } } }));
      a.rebuildModels();
    }
    return a.engineList();
  }

  /** Applies a validated settings patch (at once, or when the owner approved it). */
  private async applySettings(patch: SettingsPatch): Promise<void> {
    const a = this.agent;
    const { providerKey, ...rest } = patch;
    a.settings.update((s) => ({ ...s, ...rest }));
    if (providerKey !== undefined) {
      if (providerKey === '') a.secrets.delete(KEY_SECRET);
      else {
        a.secrets.set(KEY_SECRET, providerKey.trim());
        a.log.addSecrets([providerKey.trim()]);
      }
    }
    if (rest.hubUrl !== undefined) a.link.setUrl(hubDialUrl(a.standIns.hubUrl(rest.hubUrl)).url);
    if (providerKey !== undefined) {
      // A new key is checked with the platform first (provider status), then the link starts.
      if (a.link.state.state === 'idle') void a.providerGate.check();
      else {
        a.link.reconnect('the provider key changed');
        void a.providerGate.check();
      }
    } else if (rest.nodeName !== undefined) {
      a.link.reRegister();
    }
    if (rest.retentionDays !== undefined) a.ledger?.prune(rest.retentionDays);
    if (rest.autoPauseOnGpuBusy !== undefined) a.watchGpuBusy();
    if (rest.pauseSchedule !== undefined) a.applyPauseSchedule();
    if (rest.gatewayEnabled !== undefined || rest.gatewayListen !== undefined) await a.applyGateway();
    // A new key is checked by the provider gate above, whose status carries earnings_enabled (wireServing).
    if (providerKey === undefined && rest.serviceUrl !== undefined) void a.refreshEarningsFlag();
    if (rest.serviceUrl !== undefined) a.refreshCatalogue();
    a.emitSnapshot();
  }

  /** The newest price per model (earlier rows stay in the ledger as history). */
  private prices(): PricesView {
    const ledger = this.agent.ledger;
    const latest = new Map<string, PriceRow>();
    for (const p of ledger?.prices() ?? []) {
      const cur = latest.get(p.model);
      if (!cur || p.effectiveFrom >= cur.effectiveFrom) latest.set(p.model, p);
    }
    return { earningsEnabled: ledger?.isEarningsEnabled() ?? false, prices: [...latest.values()].sort((x, y) => x.model.localeCompare(y.model)) };
  }

  settingsView(): SettingsView {
    const a = this.agent;
    const s = a.settings.get();
    return {
      hubUrl: s.hubUrl ?? a.config.webSocketUrl,
      serviceUrl: s.serviceUrl ?? a.config.serviceUrl,
      nodeName: a.nodeName(),
      keySet: a.providerKey() !== '',
      keyStorage: a.keyStorage(),
      gatewayEnabled: s.gatewayEnabled ?? a.config.gateway.enable,
      gatewayListen: s.gatewayListen ?? a.config.gateway.listen,
      startAtLogin: s.startAtLogin ?? false,
      closeToTray: s.closeToTray ?? true,
      theme: s.theme ?? 'system',
      autoPauseOnGpuBusy: s.autoPauseOnGpuBusy ?? false,
      pauseSchedule: s.pauseSchedule ?? [],
      retentionDays: s.retentionDays ?? 365,
      alertWebhookUrl: s.alertWebhookUrl ?? '',
      alertCooldownMinutes: s.alertCooldownMinutes ?? DEFAULT_COOLDOWN_MINUTES,
      desktopNotifications: s.desktopNotifications ?? true,
      updateFeedUrl: s.updateFeedUrl ?? '',
      addedEndpoints: (s.extraEndpoints ?? []).map((e) => e.url),
    };
  }

  private supportBundle(): string {
    const a = this.agent;
    const snap = a.snapshot();
    const bundle = {
      generatedAt: new Date().toISOString(),
      version: snap.version,
      platform: `${process.platform} ${process.arch} node ${process.version}`,
      link: snap.link,
      pause: snap.pause,
      gpu: snap.gpu,
      engines: snap.engines,
      models: snap.models.map((m) => ({ id: m.id, enabled: m.enabled, health: m.health, endpoints: m.endpoints.map((e) => `${e.url} ${e.health}`) })),
      // A webhook URL often carries its own token (Discord, Slack): the bundle says only whether one is set.
      settings: { ...this.settingsView(), alertWebhookUrl: this.settingsView().alertWebhookUrl ? '(set, not shown)' : '' },
      logs: a.log.entries(500),
    };
    // Last pass over everything: configured secret values and secret-shaped text (URLs with user:pass@).
    return a.log.redactText(JSON.stringify(bundle, null, 2));
  }
}
