// The verdict: whether this node serves, whether the network routes to it, whether it earns, and if not,
// why and what to do. Computed once, here, from plain data (the snapshot's parts, or what `doctor` read),
// so the Dashboard banner, the sidebar, the tray and `doctor` never disagree. Findings are ordered worst
// first: stopped > degraded > not_routable > not_earning > serving.
import type { CatalogueView, ProviderStatusView } from '../../shared/views/snapshot';
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
  models: Array<Pick<ModelState, 'id' | 'enabled' | 'health' | 'endpoints'> & Pick<Partial<ModelState>, 'mapping'>>;
  catalogue?: CatalogueView;
  /** What the hub's register ack said it registered (absent: it did not say). */
  registeredModels?: string[];
  /** Whether requests are paid: the platform's flag (the provider status's, else the ledger's last copy). */
  earningsEnabled?: boolean;
  /** Who the models are served to, as the serving line names it (default "the Swan network"). */
  networkName?: string;
}

const ORDER: VerdictState[] = ['stopped', 'degraded', 'not_routable', 'not_earning', 'serving'];
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
    return r('key_refused', 'The network refused your provider key: nothing is served.', 'Copy the key again from your Swan Inference provider page into Settings, and check the network there.');
  }
  if (!i.hubEnabled) return r('hub_disabled', 'Connecting to the network is switched off ([Inference] Enable = false in config.toml).', 'Set Enable = true in config.toml and restart the agent.');
  if (ps?.state === 'waiting') {
    const where = ps.stepLabel ? ` (${ps.stepLabel}${ps.step && ps.totalSteps ? `, step ${ps.step} of ${ps.totalSteps}` : ''})` : '';
    return r('awaiting_approval', `The platform has not approved this provider yet${where}: the agent connects once it is.`, ps.nextSteps[0] ?? 'Request approval on your provider page; the agent checks again every minute.');
  }
  if (i.link.state === 'connecting' || i.link.state === 'registering' || (i.link.state === 'idle' && ps?.state === 'checking')) {
    return r('connecting', 'Connecting to the network…');
  }
  if (i.link.state !== 'connected') {
    return r('link_down', `Not connected to the network${i.link.reason ? `: ${i.link.reason}` : ''}.`, 'The agent retries by itself; if this lasts, check this machine\'s connection and the network in Settings.');
  }
  if (i.pause.paused) return r('paused', `Serving is paused${i.pause.reason ? `: ${i.pause.reason}` : ''}. The network sends no requests.`, 'Resume on the Dashboard or from the tray.');
  if (i.models.length === 0) {
    return r('nothing_to_serve', 'No model to serve: no engine was found and models.json names none.', 'Start an engine (Ollama, llama.cpp, vLLM, LM Studio…) and press Rescan, or add its address under Engines & models.');
  }
  if (!i.models.some((m) => m.enabled && m.endpoints.length > 0)) return r('none_switched_on', 'Every model is switched off: nothing is served.', 'Switch a model on under Engines & models.');
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
      out.push({ code: 'model_degraded', state: 'degraded', models: [m.id], text: `${m.id} answers with errors${why}.`, next: 'See Logs; it is taken out of service if this goes on.' });
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
  if (cat && cat.state !== 'idle' && cat.fetchedAt !== undefined) {
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
          : 'Serve a model the catalogue lists under its catalogue id (models.json maps an engine\'s name to it); Engines & models shows the catalogue.',
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
        next: 'See the hub\'s notices on the Dashboard and the Logs for why.',
      });
      for (const id of refused) unroutable.add(id);
    }
  }
  return { reasons, unroutable };
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
      next: ps?.nextSteps[0] ?? ps?.warning ?? 'Earnings are enabled by Swan Inference once the provider is approved and active: check its status on your provider page, or ask Swan Inference support.',
    };
  }
  return undefined;
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

export function verdictOf(i: VerdictInputs): Verdict {
  const stop = stopped(i);
  if (stop) {
    const tone = stop.code === 'paused' || stop.code === 'connecting' ? 'warn' : 'bad';
    return { state: 'stopped', tone, label: STOP_LABEL[stop.code] ?? 'Stopped', headline: stop.text, reasons: [stop], routable: [] };
  }
  const mapping = mappings(i);
  const served = i.models.filter((m) => m.enabled && m.endpoints.length > 0 && !(m.mapping && !m.mapping.confirmed));
  const ill = health(served);
  const answering = served.filter((m) => m.health !== 'unhealthy').map((m) => m.id);
  const route = routing(i, answering);
  const pay = earning(i);
  const routable = answering.filter((id) => !route.unroutable.has(id));
  const reasons = [...ill, ...route.reasons, ...(mapping ? [mapping] : []), ...(pay && routable.length ? [pay] : [])].sort((a, b) => ORDER.indexOf(a.state) - ORDER.indexOf(b.state));
  const worst = reasons[0];
  if (!worst) {
    const n = served.length;
    return { state: 'serving', tone: 'ok', label: 'Serving', headline: `Serving ${n} ${n === 1 ? 'model' : 'models'} to ${i.networkName ?? 'the Swan network'}: routed and earning.`, reasons: [], routable };
  }
  const label = worst.code === 'engine_down' ? 'Engine down' : worst.state === 'degraded' ? 'Degraded' : worst.state === 'not_routable' ? 'Not routed' : 'Not earning';
  // Nothing routed at all is bad; a part of the set missing is a warning.
  const tone = routable.length === 0 ? 'bad' : 'warn';
  const headline = routable.length === 0 || worst.state === 'not_earning' ? worst.text : `Serving ${list(routable)}. ${worst.text}`;
  return { state: worst.state, tone, label, headline, reasons, routable };
}
