// Earnings beside serving: the network's payout rates (fed to the ledger), the platform's own record,
// GPU energy per request (fed to each ledger row), and the overview the Usage page and the CLI show.
// Nothing here is on the request path except EnergyMeter's O(running) bookkeeping at start/end.
import path from 'node:path';
import type { EarningsOverview, ElectricityView, ModelPricingView, NetworkRateView } from '../../shared/views/usage';
import type { DemandView } from '../../shared/views/demand';
import { certainlyIs, DemandError, demandRows } from '../platform/demand';
import { OllamaPulls, type PullOpener, type PullState } from '../downloads/ollama-pull';
import { ollamaTags, type OllamaLocalModel } from '../engine-client/ollama-tags';
import { mapNetworkModel } from '../models/network-map';
import type { GpuSample, RequestView, UsageRecord, UsageTotals } from '../../shared/types';
import type { Ledger } from '../ledger/ledger';
import { EnergyMeter, samplePowerW } from '../ledger/energy-meter';
import type { Logger } from '../base/log';
import { NetworkRates } from '../platform/rates';
import { ProviderStatsClient } from '../platform/stats';
import { explainDifference, projection, recentWindow, zeroReason } from './earnings-view';
import { homePath } from '../config/home-layout';

export interface EarningsServiceOptions {
  home: string;
  ledger?: Ledger;
  log: Logger;
  serviceUrl: () => string;
  providerKey: () => string;
  /** The models this machine announces (for the pricing table and the Today reason). */
  models: () => string[];
  /** How often the rates are looked at (each look fetches only when the 5-minute cache is due). */
  pollMs?: number;
  now?: () => number;
  /** Platform request timeout (default 10 s). */
  timeoutMs?: number;
  /** What this machine has, for the demand table. */
  machine?: () => { known: string[]; ollamaEngines: string[]; vramGb: number | null };
  /** A pull finished: rescan the engines so the new model shows up. */
  onPulled?: () => void;
  /** The owner's models.json: "serve this" maps a network id to an engine's own name there. */
  modelsFile?: string;
  /** models.json now maps `networkId`: re-read it, switch the model on, tell the hub. */
  onMapped?: (networkId: string) => void;
  /** Opens an Ollama pull through the engine-call service. */
  openPull?: PullOpener;
}

/** Why a pull for `networkId` under the owner's `tag` will not be announced as that id. */
function unsureTag(tag: string, networkId: string, engineUrl: string): NonNullable<PullState['notAnnounced']> {
  return {
    code: 'tag_not_network_model',
    text:
      `${tag} is not known to be ${networkId}, so it is pulled but not announced as ${networkId}: the network would send it requests for another model. ` +
      `To earn for ${networkId}, pull the Ollama tag of that exact model (family, version and size), or, if you are sure they are the same, ` +
      `add "${networkId}": {"endpoint": "${engineUrl}", "local_model": "${tag}"} to models.json yourself.`,
  };
}

const EMPTY_LOCAL = {
  requests: 0,
  failed: 0,
  tokensIn: 0,
  tokensOut: 0,
  earnings: 0,
  firstAt: null,
  undelivered: { requests: 0, tokensIn: 0, tokensOut: 0, earnings: 0 },
};

export class EarningsService {
  readonly meter = new EnergyMeter();
  readonly rates: NetworkRates;
  readonly stats: ProviderStatsClient;
  readonly pulls: OllamaPulls;
  private timer?: NodeJS.Timeout;
  private readonly now: () => number;
  private readonly tagErrors = new Map<string, string>();

  constructor(private readonly o: EarningsServiceOptions) {
    this.now = o.now ?? Date.now;
    const cache = homePath(o.home, 'cache');
    const timeout = o.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : {};
    this.rates = new NetworkRates({ serviceUrl: o.serviceUrl, log: o.log, cacheFile: path.join(cache, 'network-rates.json'), now: this.now, ...timeout });
    this.stats = new ProviderStatsClient({
      serviceUrl: o.serviceUrl,
      providerKey: o.providerKey,
      log: o.log,
      cacheFile: path.join(cache, 'provider-stats.json'),
      now: this.now,
      ...timeout,
    });
    this.pulls = new OllamaPulls(
      o.log,
      undefined,
      (p) => {
        if (p.networkId && !p.notAnnounced) {
          try {
            this.mapToNetwork(p.networkId, p.engineUrl, p.model);
          } catch (e) {
            p.error = `pulled, but not announced as ${p.networkId}: ${(e as Error).message}`;
            p.notAnnounced = { code: 'mapping_refused', text: p.error };
            o.log.error(p.error);
          }
        }
        o.onPulled?.();
      },
      o.openPull,
    );
    this.rates.cache.on('change', () => o.ledger?.setNetworkRates(this.rates.rateMap()));
    // Rates saved by an earlier run are used until the platform answers (stale beats blank).
    o.ledger?.setNetworkRates(this.rates.rateMap());
  }

  /** The rates and the platform's record, now and on a timer (each look fetches only when its cache is due):
   * a headless rig keeps a fresh copy of the platform's record for `usage`, with no console open. */
  start(): void {
    const look = (): void => {
      void this.rates.get();
      if (this.o.providerKey()) void this.stats.get();
    };
    look();
    clearInterval(this.timer);
    this.timer = setInterval(look, this.o.pollMs ?? 30_000);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  onSample(sample: GpuSample): void {
    this.meter.sample(sample.ts, samplePowerW(sample));
  }

  /** Energy is attributed from when a request starts running on the engine. */
  onRequestUpdate(view: RequestView): void {
    if (view.status === 'running' && !this.meter.has(view.id)) this.meter.begin(view.id, this.now());
  }

  /** Completes a finished record before the ledger stores it: its energy, and (hub requests) that
   * its delivery to the hub is still to come. */
  onFinished(record: UsageRecord): void {
    const wh = this.meter.end(record.requestId, record.finishedAt);
    if (wh !== null) record.energyWh = wh;
    if (record.source === 'hub') record.awaitingHub = true;
  }

  pricing(models: string[]): ModelPricingView[] {
    const ledger = this.o.ledger;
    const net = this.rates.rateMap();
    const overrides = new Map<string, { inputPerM: number; outputPerM: number; effectiveFrom: number }>();
    for (const p of ledger?.prices() ?? []) {
      const cur = overrides.get(p.model);
      if (!cur || p.effectiveFrom >= cur.effectiveFrom) overrides.set(p.model, p);
    }
    return models.map((model) => {
      const r = net.get(model);
      if (r) return { model, source: 'network' as const, inputPerM: r.inputPerM, outputPerM: r.outputPerM };
      const o = overrides.get(model) ?? overrides.get('*');
      if (o) return { model, source: 'override' as const, inputPerM: o.inputPerM, outputPerM: o.outputPerM };
      return { model, source: 'none' as const, inputPerM: null, outputPerM: null };
    });
  }

  /** What the network's price list says of these models, for the verdict: `known` false while no good answer was ever read. */
  networkPricing(models: string[]): { known: boolean; priced: string[]; error?: string } {
    const v = this.rates.view();
    if (v.value === null) return { known: false, priced: [], ...(v.error ? { error: v.error } : {}) };
    const net = this.rates.rateMap();
    return { known: true, priced: models.filter((m) => net.has(m)) };
  }

  async demand(): Promise<DemandView> {
    const rates = await this.rates.get();
    const m = this.o.machine?.() ?? { known: [], ollamaEngines: [], vramGb: null };
    const onDisk = await this.onDisk(m.ollamaEngines);
    return {
      rates: { asOf: rates.asOf, stale: rates.stale, ...(rates.error ? { error: rates.error } : {}) },
      rows: demandRows({ rates: rates.value ?? [], announced: this.o.models(), known: m.known, ollama: m.ollamaEngines.length > 0, vramGb: m.vramGb, onDisk }),
      vramGb: m.vramGb,
      ollamaEngines: m.ollamaEngines,
      pulls: this.pulls.list(),
    };
  }

  /** What the Ollama engines here have on disk; an engine that does not answer adds nothing. */
  private async onDisk(engines: string[]): Promise<Array<{ engineUrl: string; model: OllamaLocalModel }>> {
    const lists = await Promise.all(
      engines.map((url) =>
        ollamaTags(url).then(
          (models) => {
            this.tagErrors.delete(url);
            return models.map((model) => ({ engineUrl: url, model }));
          },
          (e: Error) => {
            // Logged once per engine and error: the demand card asks every second while a pull runs.
            if (this.tagErrors.get(url) !== e.message) this.o.log.warn(`the models on disk of the Ollama engine at ${url} are unknown: ${e.message}`);
            this.tagErrors.set(url, e.message);
            return [];
          },
        ),
      ),
    );
    return lists.flat();
  }

  /** Pulls `model` into one of this machine's Ollama engines (never another URL); with `networkId`
   * (a model the network pays for) it is announced under that id once pulled — only when `model` is
   * certainly that model (certainlyIs). A tag that is not (qwen2.5:3b for Qwen2.5-7B) is still
   * pulled, but not announced as the network id; the pull's `notAnnounced` says so. */
  async pull(engineUrl: string, model: string, networkId?: string): Promise<DemandView> {
    const m = this.o.machine?.() ?? { known: [], ollamaEngines: [], vramGb: null };
    if (!m.ollamaEngines.includes(engineUrl))
      throw new DemandError('not_local_engine', `${engineUrl.slice(0, 200)} is not an Ollama engine found on this machine; rescan engines first.`, 'engineUrl');
    if (networkId !== undefined && !(this.rates.view().value ?? []).some((r) => r.modelId === networkId)) {
      throw new DemandError(
        'not_network_model',
        `${networkId.slice(0, 200)} is not a model the network lists a rate for; refresh the demand list and pick one from it.`,
        'networkId',
      );
    }
    const notAnnounced = networkId !== undefined && !certainlyIs(model, networkId) ? unsureTag(model, networkId, engineUrl) : undefined;
    if (notAnnounced) this.o.log.warn(notAnnounced.text);
    this.pulls.start(engineUrl, model, networkId, notAnnounced);
    return this.demand();
  }

  /** "Serve this" for a network model an Ollama engine here already has under its own tag. */
  async serve(modelId: string): Promise<DemandView> {
    const row = (await this.demand()).rows.find((r) => r.modelId === modelId);
    if (!row?.local)
      throw new DemandError(
        'not_on_disk',
        `No model on disk here is ${modelId.slice(0, 200)} under another name; pull it first, or switch it on in Models if an engine serves it under that id.`,
        'modelId',
      );
    this.mapToNetwork(modelId, row.local.engineUrl, row.local.model);
    return this.demand();
  }

  /** "Serve my model as…": models.json maps the catalogue id to an engine's model here (then checked against
   * what that engine reports, as every mapping is); answers the path of models.json. */
  serveAs(networkId: string, engineUrl: string, localModel: string): string {
    this.mapToNetwork(networkId, engineUrl, localModel);
    return this.o.modelsFile!;
  }

  private mapToNetwork(networkId: string, engineUrl: string, localModel: string): void {
    if (!this.o.modelsFile) throw new DemandError('no_models_file', 'this agent has no models.json to write the mapping to');
    const r = mapNetworkModel(this.o.modelsFile, networkId, engineUrl, localModel);
    this.o.log.info(
      `${r === 'added' ? 'models.json now maps' : 'models.json already maps'} ${networkId} to ${localModel} at ${engineUrl}; announcing it as ${networkId}`,
    );
    this.o.onMapped?.(networkId);
  }

  todayReason(today: UsageTotals): ReturnType<typeof zeroReason> {
    const ledger = this.o.ledger;
    return zeroReason({
      earnings: today.earnings,
      requests: today.requests,
      enabled: ledger?.isEarningsEnabled() ?? true,
      anyPriced: this.pricing(this.o.models()).some((p) => p.source !== 'none'),
      pricesKnown: this.rates.view().value !== null,
    });
  }

  /** `offline`: from the cached copies only, never asking the platform (the `usage` CLI). */
  async overview(refresh = false, offline = false): Promise<EarningsOverview> {
    const [rates, platform] = offline ? [this.rates.view(), this.stats.view()] : await Promise.all([this.rates.get(refresh), this.stats.get(refresh)]);
    const ledger = this.o.ledger;
    const now = this.now();
    const local = ledger ? ledger.hubLifetime() : EMPTY_LOCAL;
    const { difference, reasons } = explainDifference(platform, local);
    const windowMs = recentWindow(now, local.firstAt);
    const recent =
      windowMs > 0 && ledger
        ? ledger.totals(now - windowMs, now + 1)
        : { requests: 0, errors: 0, tokensIn: 0, tokensOut: 0, earnings: 0, energyWh: 0, cost: 0 };
    const electricity: ElectricityView | null = ledger?.electricityPrice() ?? null;
    const proj = projection({ now, firstAt: local.firstAt, recent, windowMs, electricitySet: electricity !== null });
    const rateList: NetworkRateView[] | null = rates.value ? rates.value.map((r) => ({ ...r })) : null;
    return {
      generatedAt: now,
      earningsEnabled: ledger?.isEarningsEnabled() ?? true,
      rates: { ...rates, value: rateList },
      platform,
      local,
      difference,
      reasons,
      pricing: this.pricing(this.o.models()),
      electricity,
      recent: {
        windowMs,
        requests: recent.requests,
        earnings: recent.earnings,
        energyWh: recent.energyWh ?? 0,
        cost: recent.cost ?? 0,
        net: recent.earnings - (recent.cost ?? 0),
      },
      projection: 'unavailable' in proj ? null : proj,
      ...('unavailable' in proj ? { projectionUnavailable: proj.unavailable } : {}),
    };
  }
}
