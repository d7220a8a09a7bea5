// The verdict: whether this node serves, whether the network routes to it, whether it earns, and if not,
// why and what to do. Computed once, here, from plain data (the snapshot's parts, or what `doctor` read),
// so the Dashboard banner, the sidebar, the tray and `doctor` never disagree. Findings are ordered worst
// first: stopped > degraded > not_routable > unknown > not_earning > serving. Serving, routed and earning are
// three facts, each said only on its evidence: a catalogue or price list that could not be read makes routing
// or pay unknown (its own state), never a pass; the hub's notices (reputation, withheld traffic) count.
import type { CatalogueView, HubNoticeView, ProviderStatusView } from '../../shared/views/snapshot';
import type { LinkStatus, ModelState, PauseState, Verdict, VerdictCode, VerdictReason, VerdictState } from '../../shared/types';

export interface VerdictInputs {
  /** The agent runs (false before start and after stop). */
  running: boolean;
  hasKey: boolean;
  /** [Inference] Enable: whether the agent connects to the hub at all. */
  hubEnabled: boolean;
  link: Pick<LinkStatus, 'state' | 'reason'>;
  pause: PauseState;
  providerStatus?: ProviderStatusView;
  models: Array<Pick<ModelState, 'id' | 'enabled' | 'health' | 'endpoints'> & Partial<Pick<ModelState, 'withdrawn' | 'mapping' | 'gpuHold'>>>;
  catalogue?: CatalogueView;
  /** What the hub's register ack said it registered (absent: it did not say). */
  registeredModels?: string[];
  /** Whether requests are paid: the platform's flag (the provider status's, else the ledger's last copy). */
  earningsEnabled?: boolean;
  /** Who the models are served to, as the serving line names it (default "the Swan network"). */
  networkName?: string;
  /**
   * What the network pays for, from its price list (model-demand): `known` false while no good answer was
   * ever read (then pay is unknown); `priced` the served ids it lists. Absent: not looked at (unknown).
   */
  pricing?: { known: boolean; priced: string[]; error?: string };
  /** The hub's notices (newest first); those of the last NOTICE_WINDOW_MS about reputation or withheld traffic count. */
  notices?: Array<Pick<HubNoticeView, 'event' | 'severity' | 'modelId' | 'message' | 'receivedAt'>>;
  /** The clock the notices' window is read against (default Date.now). */
  now?: number;
  /** The home's disk refuses writes (the ledger's or the log's): what, and the file that showed it. */
  disk?: { code: 'disk_full' | 'disk_read_only'; file: string };
  /** This machine's own checks (self-check): what health alone does not show. */
  checks?: MachineChecks;
}

/** What the self-check reads beyond health: windows the engine does not honour, the home's disk, traffic since start. */
export interface MachineChecks {
  /** Models announced with models.json's context_length above what their engine runs. */
  contexts?: Array<{ model: string; announced: number; engine: number; via: string }>;
  /** The disk under the home (free and total bytes). */
  disk?: { path: string; freeBytes: number; totalBytes: number };
  /** Hub requests since the agent started, and since when the link is up. */
  traffic?: { hubRequests: number; connectedSince: number; now: number };
}

/** The disk under the home is nearly full below either floor (the ledger and the logs stop growing). */
export const DISK_FLOOR_BYTES = 1024 ** 3;
export const DISK_FLOOR_SHARE = 0.05;
/** Connected this long with no hub request at all: the network is not sending this node anything. */
export const NO_TRAFFIC_AFTER_MS = 30 * 60_000;

const ORDER: VerdictState[] = ['stopped', 'degraded', 'not_routable', 'unknown', 'not_earning', 'serving'];
/** A notice of reputation or withheld traffic speaks for this long (the hub sends no "cleared" notice). */
export const NOTICE_WINDOW_MS = 24 * 3_600_000;
/** Provider statuses in which the platform is still reviewing the provider. */
const IN_REVIEW = new Set(['pending', 'under_review', 'activating']);

function list(ids: string[]): string {
  return ids.length <= 3 ? ids.join(', ') : `${ids.slice(0, 3).join(', ')} and ${ids.length - 3} more`;
}

const them = (ids: string[]): string => (ids.length === 1 ? 'it' : 'them');

/** Why nothing is served, if so: one finding, the first that applies. */
function stopped(i: VerdictInputs): VerdictReason | undefined {
  const r = (code: VerdictCode, text: string, next?: string): VerdictReason => ({ code, state: 'stopped', text, ...(next ? { next } : {}) });
  if (!i.running) return r('agent_stopped', 'The agent is not running: nothing is served.', 'Start it: open the desktop app, or run `swan-provider run`.');
  if (!i.hasKey) return r('no_key', 'No provider key yet, so the agent cannot join the network.', 'Paste your provider key in Settings.');
  const ps = i.providerStatus;
  if (i.link.state === 'auth_failed' || ps?.state === 'invalid_key') {
    return r(
      'key_refused',
      'The network refused your provider key: nothing is served.',
      'Copy the key again from your Swan Inference provider page into Settings, and check the network there.',
    );
  }
  if (!i.hubEnabled)
    return r(
      'hub_disabled',
      'Connecting to the network is switched off ([Inference] Enable = false in config.toml).',
      'Set Enable = true in config.toml and restart the agent.',
    );
  if (ps?.state === 'waiting') {
    const where = ps.stepLabel ? ` (${ps.stepLabel}${ps.step && ps.totalSteps ? `, step ${ps.step} of ${ps.totalSteps}` : ''})` : '';
    return r(
      'awaiting_approval',
      `The platform has not approved this provider yet${where}: the agent connects once it is.`,
      ps.nextSteps[0] ?? 'Request approval on your provider page; the agent checks again every minute.',
    );
  }
  if (i.link.state === 'connecting' || i.link.state === 'registering' || (i.link.state === 'idle' && ps?.state === 'checking')) {
    return r('connecting', 'Connecting to the network…');
  }
  if (i.link.state !== 'connected') {
    return r(
      'link_down',
      `Not connected to the network${i.link.reason ? `: ${i.link.reason}` : ''}.`,
      "The agent retries by itself; if this lasts, check this machine's connection and the network in Settings.",
    );
  }
  if (i.pause.paused)
    return r(
      'paused',
      `Serving is paused${i.pause.reason ? `: ${i.pause.reason}` : ''}. The network sends no requests.`,
      'Resume on the Dashboard or from the tray.',
    );
  if (i.models.length === 0) {
    return r(
      'nothing_to_serve',
      'No model to serve: no engine was found and models.json names none.',
      'Start an engine (Ollama, llama.cpp, vLLM, LM Studio…) and press Rescan, or add its address under Engines & models.',
    );
  }
  if (!i.models.some((m) => m.enabled && m.endpoints.length > 0))
    return r('none_switched_on', 'Every model is switched off: nothing is served.', 'Switch a model on under Engines & models.');
  return undefined;
}

/** Served models that do not answer, or answer with errors. */
function health(served: VerdictInputs['models']): VerdictReason[] {
  const out: VerdictReason[] = [];
  for (const m of served) {
    if (m.health === 'healthy') continue;
    const ep = m.endpoints.find((e) => e.health === m.health) ?? m.endpoints[0];
    const why = ep?.lastError ? `: ${ep.lastError}` : '';
    if (m.health === 'degraded') {
      out.push({
        code: 'model_degraded',
        state: 'degraded',
        models: [m.id],
        text: `${m.id} answers with errors${why}.`,
        next: 'See Logs; it is taken out of service if this goes on.',
      });
    } else if (ep?.condition === 'down') {
      out.push({
        code: 'engine_down',
        state: 'degraded',
        models: [m.id],
        text: `The engine of ${m.id} at ${ep.url} is not running${why}.`,
        next: 'Start the engine again: the model serves again within one health check of the engine answering.',
      });
    } else {
      const next =
        ep?.condition === 'key_rejected'
          ? `Put the engine's key as "api_key" of ${m.id} in models.json.`
          : ep?.condition === 'loading'
            ? 'Wait: it serves once the engine has loaded the model.'
            : 'Check the engine (Engines & models shows it) and Logs.';
      out.push({ code: 'model_unhealthy', state: 'degraded', models: [m.id], text: `${m.id} does not answer${why}.`, next });
    }
  }
  return out;
}

/** Served, answering models the network will not send requests to. */
function routing(i: VerdictInputs, answering: string[]): { reasons: VerdictReason[]; unroutable: Set<string> } {
  const reasons: VerdictReason[] = [];
  const unroutable = new Set<string>();
  const cat = i.catalogue;
  if (answering.length && (!cat || cat.fetchedAt === undefined)) {
    // Never read: whether the network routes these is not known, which is not the same as yes.
    reasons.push({
      code: 'routing_unknown',
      state: 'unknown',
      models: answering,
      text:
        cat?.state === 'error'
          ? `The network's catalogue could not be read (${cat.error ?? 'no answer'}): whether it routes requests to ${list(answering)} is not known.`
          : `The network's catalogue has not been read yet: whether it routes requests to ${list(answering)} is not known.`,
      next:
        cat?.state === 'error'
          ? `Check the network's API address (ServiceURL) in Settings: ${cat.url} should list the catalogue; the agent reads it again every 30 minutes.`
          : 'Wait a moment: the agent reads the catalogue when it starts.',
    });
  } else if (cat && cat.fetchedAt !== undefined) {
    const missing = answering.filter((id) => cat.models[id]?.known === false);
    if (missing.length) {
      const matched = missing.map((id) => [id, cat.models[id]?.matchedId] as const).filter(([, to]) => to);
      reasons.push({
        code: 'not_in_catalogue',
        state: 'not_routable',
        models: missing,
        text: `${list(missing)} ${missing.length === 1 ? 'is' : 'are'} not in the network's catalogue: the network sends ${them(missing)} no requests.`,
        next: matched.length
          ? `Serve ${matched.map(([id, to]) => `${id} as ${to}`).join(', ')}: Engines & models has the models.json line.`
          : "Serve a model the catalogue lists under its catalogue id (models.json maps an engine's name to it); Engines & models shows the catalogue.",
      });
      for (const id of missing) unroutable.add(id);
    }
  }
  if (i.registeredModels) {
    const registered = new Set(i.registeredModels);
    const refused = answering.filter((id) => !registered.has(id) && !unroutable.has(id));
    if (refused.length) {
      reasons.push({
        code: 'not_registered',
        state: 'not_routable',
        models: refused,
        text: `The hub did not register ${list(refused)}: it sends ${them(refused)} no requests.`,
        next: "See the hub's notices on the Dashboard and the Logs for why.",
      });
      for (const id of refused) unroutable.add(id);
    }
  }
  return { reasons, unroutable };
}

/** Routed models the network's price list has no rate for, or that list could not be read. */
function pricing(i: VerdictInputs, routable: string[]): VerdictReason | undefined {
  if (!routable.length) return undefined;
  const p = i.pricing;
  if (!p?.known) {
    return {
      code: 'pricing_unknown',
      state: 'unknown',
      models: routable,
      text: `The network's price list could not be read${p?.error ? ` (${p.error})` : ''}: whether requests for ${list(routable)} are paid is not known.`,
      next: "Check the network's API address (ServiceURL) in Settings; the agent reads the price list again within a minute.",
    };
  }
  const priced = new Set(p.priced);
  const unpriced = routable.filter((id) => !priced.has(id));
  if (!unpriced.length) return undefined;
  return {
    code: 'not_priced',
    state: 'not_earning',
    models: unpriced,
    text: `${list(unpriced)} ${unpriced.length === 1 ? 'has' : 'have'} no rate in the network's price list: requests for ${them(unpriced)} are not paid.`,
    next: 'Serve a model the network prices: Earnings lists the rates, and Engines & models the catalogue.',
  };
}

/** The hub's own word on this provider: its reputation dropped, or it withholds traffic (recent notices only). */
function notices(i: VerdictInputs, routable: string[]): VerdictReason[] {
  const now = i.now ?? Date.now();
  const recent = (i.notices ?? []).filter((n) => n.severity !== 'info' && now - n.receivedAt <= NOTICE_WINDOW_MS);
  const out: VerdictReason[] = [];
  // A notice about one model counts for that model only when it is one routed here.
  const withheld = recent.find((n) => /withh(e|o)ld/.test(n.event) && (!n.modelId || routable.includes(n.modelId)));
  if (withheld && routable.length) {
    const models = withheld.modelId ? [withheld.modelId] : routable;
    out.push({
      code: 'traffic_withheld',
      state: 'not_routable',
      models,
      text: `The network says it withholds traffic from ${withheld.modelId ?? 'this provider'}: ${withheld.message}`,
      next: 'See the notice on the Dashboard for why; the hub sends requests again once it is resolved.',
    });
  }
  const reputation = recent.find((n) => /reputation/.test(n.event));
  if (reputation && routable.length) {
    out.push({
      code: 'reputation_low',
      state: 'not_routable',
      ...(reputation.modelId ? { models: [reputation.modelId] } : {}),
      text: `The network lowered this provider's reputation, so it sends fewer requests: ${reputation.message}`,
      next: 'Keep the models healthy and answering (failed and slow requests lower it); see the notice on the Dashboard.',
    });
  }
  return out;
}

/** Switched-on models held back because the engine's report contradicts the id they would be announced under. */
function mappings(i: VerdictInputs): VerdictReason | undefined {
  const held = i.models.filter((m) => m.enabled && m.endpoints.length > 0 && m.mapping && !m.mapping.confirmed && m.mapping.code !== 'mapping_unchecked');
  if (held.length === 0) return undefined;
  const ids = held.map((m) => m.id);
  return {
    code: 'mapping_contradicts_engine',
    state: 'not_routable',
    models: ids,
    text: `${held.length === 1 ? `${held[0]!.mapping!.text} It is` : `${list(ids)} do not match what their engines report; they are`} not announced: the network checks served weights, and a mismatch costs you.`,
    next: 'Map the right model under Engines & models (or fix models.json), or confirm it there if the engine is wrong about it.',
  };
}

/** Routed, but unpaid. */
function earning(i: VerdictInputs): VerdictReason | undefined {
  const ps = i.providerStatus;
  if (ps?.status && IN_REVIEW.has(ps.status) && ps.earningsEnabled !== true) {
    return {
      code: 'under_review',
      state: 'not_earning',
      text: `The platform is reviewing this provider${ps.stepLabel ? ` (${ps.stepLabel})` : ''}: requests are served, but not paid yet.`,
      next: ps.nextSteps[0] ?? ps.warning ?? 'Wait for the review; earnings start once the provider is approved.',
    };
  }
  if (i.earningsEnabled === false) {
    return {
      code: 'earnings_disabled',
      state: 'not_earning',
      text: 'Earnings are not enabled for this provider: requests are served, but not paid.',
      next:
        ps?.nextSteps[0] ??
        ps?.warning ??
        'Earnings are enabled by Swan Inference once the provider is approved and active: check its status on your provider page, or ask Swan Inference support.',
    };
  }
  return undefined;
}

/** The home's disk is full or read-only: requests are served, but what they earn waits in memory. */
function disk(i: VerdictInputs): VerdictReason[] {
  if (!i.disk) return [];
  const full = i.disk.code === 'disk_full';
  return [
    {
      code: i.disk.code,
      state: 'degraded',
      text: `The disk holding ${i.disk.file} is ${full ? 'full' : 'read-only'}: usage records wait in memory until it can be written.`,
      next: full
        ? 'Free some space on that disk; the held records are written by themselves within seconds.'
        : 'Make that disk writable again (a disk the system set read-only after errors needs a check and a remount).',
    },
  ];
}

const STOP_LABEL: Partial<Record<VerdictCode, string>> = {
  agent_stopped: 'Stopped',
  no_key: 'No provider key',
  key_refused: 'Key refused',
  hub_disabled: 'Not connecting',
  awaiting_approval: 'Awaiting approval',
  connecting: 'Connecting',
  link_down: 'Disconnected',
  paused: 'Paused',
  nothing_to_serve: 'Connected, nothing to serve',
  none_switched_on: 'Connected, nothing to serve',
};

/** Stop findings that are a choice or a wait, not a fault: amber, not red. */
const AMBER_STOPS = new Set<VerdictCode>(['paused', 'connecting', 'nothing_to_serve', 'none_switched_on']);

const LABEL: Partial<Record<VerdictCode, string>> = {
  engine_down: 'Engine down',
  routing_unknown: 'Routing unknown',
  pricing_unknown: 'Pay unknown',
  traffic_withheld: 'Traffic withheld',
  reputation_low: 'Reputation low',
  disk_full: 'Disk full',
  disk_read_only: 'Disk read-only',
};
const STATE_LABEL: Record<VerdictState, string> = {
  stopped: 'Stopped',
  degraded: 'Degraded',
  not_routable: 'Not routed',
  unknown: 'Not confirmed',
  not_earning: 'Not earning',
  serving: 'Serving',
};

/** Models self-healing withdrew from the hub (their probes or requests kept failing): not routed until a probe passes. */
function withdrawals(served: VerdictInputs['models'], route: { reasons: VerdictReason[]; unroutable: Set<string> }): void {
  for (const m of served) {
    if (!m.withdrawn) continue;
    route.unroutable.add(m.id);
    route.reasons.push({
      code: 'model_withdrawn',
      state: 'not_routable',
      models: [m.id],
      text: `${m.id} is withdrawn from the network: ${m.withdrawn.detail}.`,
      next: 'It is announced again by itself once a real probe passes. Check its engine (Engines & models) and Logs; Warm up tests it now.',
    });
  }
}

const HOLD_NEXT: Record<NonNullable<ModelState['gpuHold']>['cause'], (gpu: number) => string> = {
  given_back: (gpu) => `Let GPU ${gpu} serve again on the Dashboard when you are done with it.`,
  gpu_busy: (gpu) => `It serves again by itself once the other program on GPU ${gpu} stops.`,
  gpu_hot: (gpu) => `It serves again by itself once GPU ${gpu} has cooled below its ceiling.`,
  schedule: (gpu) => `It serves again by itself when your schedule's window for GPU ${gpu} ends (Engines & models).`,
};

/** Models held while a GPU they run on is paused (a rig with several GPUs): not announced until that GPU serves. */
function gpuHolds(served: VerdictInputs['models'], route: { reasons: VerdictReason[]; unroutable: Set<string> }): void {
  for (const m of served) {
    const h = m.gpuHold;
    if (!h || route.unroutable.has(m.id)) continue;
    route.unroutable.add(m.id);
    const where = h.placement === 'unknown' ? ` (where it runs is not known, so it pauses with any GPU)` : '';
    route.reasons.push({
      code: 'model_gpu_paused',
      state: 'not_routable',
      models: [m.id],
      text: `${m.id} is not offered to the network while GPU ${h.gpu} is paused${where}.`,
      next: HOLD_NEXT[h.cause](h.gpu),
    });
  }
}

/**
 * The self-check's findings (small, each with its code and what to do): part of every verdict that is not
 * stopped, and what `doctor` reports of the self-check whatever the verdict.
 */
export function machineChecks(c: MachineChecks | undefined, routable: string[]): VerdictReason[] {
  const out: VerdictReason[] = [];
  for (const x of c?.contexts ?? []) {
    if (x.announced <= x.engine) continue;
    out.push({
      code: 'context_not_honoured',
      state: 'degraded',
      models: [x.model],
      text: `${x.model} is announced with a ${x.announced}-token context window, but its engine runs ${x.engine} (${x.via}): longer requests fail.`,
      next: `Set "context_length" of ${x.model} in models.json to ${x.engine} or less, or start the engine with a larger context.`,
    });
  }
  const d = c?.disk;
  if (d && d.totalBytes > 0 && (d.freeBytes < DISK_FLOOR_BYTES || d.freeBytes / d.totalBytes < DISK_FLOOR_SHARE)) {
    const gb = (d.freeBytes / 1024 ** 3).toFixed(1);
    out.push({
      code: 'disk_nearly_full',
      state: 'degraded',
      text: `The disk under ${d.path} is nearly full (${gb} GB free): the ledger and the logs cannot grow.`,
      next: 'Free space on that disk (old logs, unused models), or move the home to a larger disk.',
    });
  }
  const t = c?.traffic;
  if (t && routable.length > 0 && t.hubRequests === 0 && t.now - t.connectedSince >= NO_TRAFFIC_AFTER_MS) {
    const min = Math.floor((t.now - t.connectedSince) / 60_000);
    out.push({
      code: 'no_traffic',
      state: 'not_earning',
      text: `No request from the network in the ${min} minutes since this node connected: nothing earned yet.`,
      next: 'The network routes by demand and price: see Earnings for what your models are paid and which models it asks for.',
    });
  }
  return out;
}

export function verdictOf(i: VerdictInputs): Verdict {
  const stop = stopped(i);
  if (stop) {
    const tone = AMBER_STOPS.has(stop.code) ? 'warn' : 'bad';
    return { state: 'stopped', tone, label: STOP_LABEL[stop.code] ?? 'Stopped', headline: stop.text, reasons: [stop, ...disk(i)], routable: [] };
  }
  const mapping = mappings(i);
  const served = i.models.filter((m) => m.enabled && m.endpoints.length > 0 && !(m.mapping && !m.mapping.confirmed));
  const ill = health(served);
  const answering = served.filter((m) => m.health !== 'unhealthy').map((m) => m.id);
  const route = routing(i, answering);
  withdrawals(served, route);
  gpuHolds(served, route);
  const routable = answering.filter((id) => !route.unroutable.has(id));
  const said = notices(i, routable);
  // Pay is looked at only where routing is known: unknown routing already says nothing is confirmed.
  const routingKnown = !route.reasons.some((r) => r.code === 'routing_unknown');
  const price = routingKnown ? pricing(i, routable) : undefined;
  const pay = earning(i);
  const reasons = [
    ...ill,
    ...disk(i),
    ...route.reasons,
    ...(mapping ? [mapping] : []),
    ...said,
    ...(price ? [price] : []),
    ...(pay && routable.length ? [pay] : []),
    ...machineChecks(i.checks, routable),
  ].sort((a, b) => ORDER.indexOf(a.state) - ORDER.indexOf(b.state));
  const worst = reasons[0];
  if (!worst) {
    const n = served.length;
    return {
      state: 'serving',
      tone: 'ok',
      label: 'Serving',
      headline: `Serving ${n} ${n === 1 ? 'model' : 'models'} to ${i.networkName ?? 'the Swan network'}: routed and earning.`,
      reasons: [],
      routable,
    };
  }
  const label = LABEL[worst.code] ?? STATE_LABEL[worst.state];
  // Nothing routed at all is bad; a part of the set missing, or a fact not known, is a warning.
  const tone = routable.length === 0 && worst.state !== 'unknown' ? 'bad' : 'warn';
  // "Serving X." names only models no finding is about: never one that is failing, unrouted or unknown.
  const troubled = new Set(reasons.flatMap((r) => r.models ?? []));
  const clean = reasons.some((r) => !r.models && r.state !== 'not_earning') ? [] : routable.filter((id) => !troubled.has(id));
  const headline = clean.length === 0 || worst.state === 'not_earning' ? worst.text : `Serving ${list(clean)}. ${worst.text}`;
  return { state: worst.state, tone, label, headline, reasons, routable };
}
