// `swan-provider doctor`: checks what the agent of this home would use — config.toml overlaid by the
// console's settings.json, the provider key where the agent finds it (INFERENCE_API_KEY, then the
// saved secret, then ApiKey), the hub, the engines and whether anything would be served — and says
// what to fix. Exit 0 only when every check passed and the verdict is serving (the models served are
// answering, routed and priced as far as can be known: a catalogue or price list that cannot be read is not
// a pass), 1 otherwise, 2 when there is no usable config. The running agent's self-check is made too, with its
// codes (doctor-self-check.ts): a context window the engine does not honour and a disk nearly full under the
// home are read here; traffic since start is asked of the agent running in the home, else "unknown". A finding
// counts as the agent's verdict counts it (disk_nearly_full and context_not_honoured: degraded, not serving);
// an unknown is said as such and is neither a pass nor a problem. `--json` prints the same as one JSON object:
// the verdict with its stable codes, every check, the self-check, and the exit code.
import { networkLabel } from '../shared/networks';
import fs from 'node:fs';
import path from 'node:path';
import WebSocket from 'ws';
import { homePath, KEY_SECRET } from '../core/config/home-layout';
import { ModelRegistry } from '../core/models/registry';
import { OwnerValues } from '../core/config/owner-values';
import { ConfigError, hubDialUrl, loadConfig, type ProviderConfig } from '../core/config/config';
import { EngineDiscovery } from '../core/engine-client/discovery';
import { checkEndpoint } from '../core/engine-client/health';
import { endpointKey } from '../core/engine-client/url';
import { readProbe, type DeepFailure } from '../core/engine-client/deep-probe';
import { chatCompatible } from '../core/engine-client/category';
import { standaloneHealthProbe } from '../core/inference/health-probe';
import { describeStatus, fetchProviderStatus, statusView } from '../core/hub/provider-status';
import { networkOf } from '../shared/networks';
import { noConfigHelp } from './run';
import { forTerminal } from '../core/base/terminal';
import { memoryLog } from '../core/base/log';
import { Catalogue } from '../core/platform/catalogue';
import { NetworkRates } from '../core/platform/rates';
import { mappingChecks } from '../core/models/mapping-check';
import { verdictOf } from '../core/bridge/verdict';
import { catalogueSubjects } from '../core/bridge/snapshot';
import type { ProviderStatusView } from '../shared/views/snapshot';
import type { ModelState, Verdict } from '../shared/types';
import { hubViewChecks, readHubView } from '../core/hub/hub-view';
import { readSelfCheck, SELF_CHECK_CODES, selfCheckItems, type SelfCheckItem } from './doctor-self-check';

/** One line of doctor's; `unknown`: not checked or not knowable here (not a pass, not counted as a problem). */
type Check = { ok: boolean; unknown?: true; what: string; fix?: string };

/** What to do about a failed deep check, by its reason code. */
const DEEP_FIX: Record<DeepFailure, string> = {
  no_response: 'start the engine, or restart it if it is stuck',
  key_rejected: 'set "api_key" in models.json to the engine\'s key',
  not_served: 'set "local_model" in models.json to the name the engine lists',
  engine_error: 'restart the engine; its model list answers but it cannot generate',
  loading: 'wait for the engine to finish loading its model',
};

/** The desktop app keeps the key encrypted by the OS keychain here; doctor can see it exists, not read it. */

function dialOnce(url: string, timeoutMs = 5000): Promise<string | undefined> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { handshakeTimeout: timeoutMs });
    ws.on('open', () => {
      ws.close();
      resolve(undefined);
    });
    ws.on('unexpected-response', (_q, res) => {
      resolve(`HTTP ${res.statusCode}`);
      ws.terminate();
    });
    ws.on('error', (e) => resolve(e.message));
  });
}

/** The key the agent would use, and where it comes from (the agent's own order). */
/** Where the key in use comes from, in words. */
function keySource(values: OwnerValues, home: string): string {
  const storage = values.keyStorage();
  if (storage === 'env') return 'INFERENCE_API_KEY';
  if (storage === 'file' || storage === 'keychain') return `the console (${homePath(home, 'secrets')})`;
  return `ApiKey in ${values.config.file}`;
}

function keychainHasKey(home: string): boolean {
  try {
    const parsed = JSON.parse(fs.readFileSync(homePath(home, 'keychainSecrets'), 'utf8')) as Record<string, unknown>;
    return typeof parsed[KEY_SECRET] === 'string';
  } catch {
    return false;
  }
}

/** What `doctor --json` prints: the verdict with its codes, every check, and the exit code. */
export interface DoctorReport {
  exit: number;
  verdict?: Pick<Verdict, 'state' | 'tone' | 'label' | 'headline' | 'reasons' | 'routable'> & { codes: string[] };
  checks: Check[];
  /** The running agent's self-check as far as doctor can make it: each finding by its code, found, clear or unknown. */
  selfCheck?: SelfCheckItem[];
  /** Why there is no verdict (exit 2: no usable config). */
  error?: string;
}

export async function doctorCommand(o: { home: string; config?: string; env?: NodeJS.ProcessEnv; json?: boolean }): Promise<number> {
  const env = o.env ?? process.env;
  const configPath = path.resolve(o.config ?? homePath(o.home, 'config'));
  const checks: Check[] = [];
  const fail = (text: string): number => {
    process.stdout.write(o.json ? `${JSON.stringify({ exit: 2, checks: [], error: text } satisfies DoctorReport)}\n` : forTerminal(`✗ ${text}\n`));
    return 2;
  };
  if (!fs.existsSync(configPath)) return fail(noConfigHelp(configPath, o.home));
  let cfg: ProviderConfig;
  try {
    cfg = loadConfig(configPath, env);
    checks.push({ ok: true, what: `config ${configPath} reads fine (${Object.keys(cfg.modelEntries).length} model(s) in models.json)` });
  } catch (e) {
    const msg = e instanceof ConfigError ? e.message : (e as Error).message;
    return fail(`config: ${msg}`);
  }
  // The values the agent of this home would use (the same overlay, key and holds as OwnerValues gives it).
  const values = OwnerValues.ofHome(o.home, cfg, env);
  const settings = values.settings.get();
  const hubUrl = values.hubUrl();
  const serviceUrl = values.serviceUrl();
  const network = networkOf(hubUrl);
  checks.push({
    ok: true,
    what: `network: ${network === 'custom' ? 'custom hub' : network} (${hubUrl}, API ${serviceUrl})${settings.hubUrl ? ' — set in the console' : ''}`,
  });

  const key = values.providerKey();
  const from = keySource(values, o.home);
  const held = values.keyHeld();
  const inKeychain = !key && keychainHasKey(o.home);
  if (held.length > 0)
    checks.push({
      ok: false,
      what: `provider key held (key_destination_held): it would go to ${held.join(', ')}, which you have not approved for it, so it is not sent (doctor neither)`,
      fix: 'approve the new address in the console (Settings) or with `swan-provider approve`, or set the address back',
    });
  else if (inKeychain)
    checks.push({ ok: true, what: 'provider key saved by the desktop app in the OS keychain (doctor cannot read it, so it is not checked with the hub)' });
  else if (!key)
    checks.push({
      ok: false,
      what: 'no provider key',
      fix: 'paste it in the console (onboarding or Settings), or set ApiKey in [Inference] or INFERENCE_API_KEY',
    });
  else if (!/^[\w.-]{8,256}$/.test(key))
    checks.push({ ok: false, what: `the provider key from ${from} has an unexpected format`, fix: 'copy it again, without spaces or quotes' });
  else checks.push({ ok: true, what: `provider key set (${key.slice(0, 8)}…, from ${from})` });
  let status: ProviderStatusView | undefined;
  if (key) {
    // The platform's provider status decides whether the agent connects (api_key_valid, can_connect).
    const v = statusView(`${serviceUrl.replace(/\/+$/, '')}/api/v1/provider/status`, await fetchProviderStatus(serviceUrl, key));
    const lines = describeStatus(v)
      .map((l) => `\n    ${l}`)
      .join('');
    if (v.state === 'invalid_key')
      checks.push({
        ok: false,
        what: `provider status at ${v.url}: the key is not valid${lines}`,
        fix: 'copy the key again from your Swan Inference provider page, and check the network in Settings (the agent does not connect with this key)',
      });
    else if (v.state === 'waiting')
      checks.push({
        ok: false,
        what: `provider status at ${v.url}: this provider cannot connect yet${lines}`,
        fix: 'follow the next steps above; the agent re-checks every minute and connects once approved',
      });
    else if (v.state === 'unreachable')
      checks.push({
        ok: false,
        what: `provider status at ${v.url} could not be read: ${v.error ?? 'no answer'}`,
        fix: 'check the network (ServiceURL) and your connection (the agent connects anyway)',
      });
    else checks.push({ ok: true, what: `provider status at ${v.url}: can connect${lines}` });
    status = v;
  }
  const dial = hubDialUrl(hubUrl);
  const err = await dialOnce(dial.url);
  checks.push(
    err
      ? { ok: false, what: `hub ${dial.url} not reachable: ${err}`, fix: 'check the network (WebSocketURL) and your connection' }
      : { ok: true, what: `hub ${dial.url} answers` },
  );

  // What the agent would serve: models.json + engines found (the agent's discovery rule) + the owner's toggles.
  // models.json's endpoints too, as the agent probes them: what their engines report checks the mappings.
  const ownerHosts = [
    ...cfg.agent.engineHosts,
    ...(settings.extraEndpoints ?? []).map((e) => e.url),
    ...Object.values(cfg.modelEntries).map((e) => e.endpoint),
  ];
  const keyFor = (url: string) => Object.values(cfg.modelEntries).find((m) => m.api_key && endpointKey(m.endpoint) === url)?.api_key;
  const engines = await new EngineDiscovery({ hosts: ownerHosts, ...(cfg.agent.discovery ? {} : { probeUrls: [] }), intervalMs: 0, keyFor }).rescan();
  const registry = new ModelRegistry();
  registry.rebuild({ entries: cfg.modelEntries, configModels: cfg.models, engines, prefs: settings.models ?? {} });
  // Every mapping checked against what its engine reports: a contradiction is not announced (models/mapping-check.ts).
  registry.setMappingChecks(mappingChecks(registry, engines, (id) => settings.models?.[id]?.confirmedMapping));
  for (const m of registry.all()) {
    const f = registry.mappingOf(m.id);
    if (!f || !m.enabled) continue;
    if (f.confirmed) checks.push({ ok: true, what: `${m.id} [${f.code}]: ${f.text} Announced: you confirmed it.` });
    else
      checks.push({
        ok: false,
        what: `${m.id} [${f.code}]: ${f.text} Not announced.`,
        fix: `map the right model to ${m.id} in models.json, or confirm it under Engines & models if the engine is wrong about it`,
      });
  }
  for (const e of engines.filter((x) => !x.reachable))
    checks.push({ ok: false, what: `engine at ${e.url}: ${e.error ?? 'not answering'}`, fix: 'start it, or remove the address' });
  const found = engines.filter((e) => e.reachable);
  if (found.length) checks.push({ ok: true, what: `engines found: ${found.map((e) => `${e.type} at ${e.url}`).join(', ')}` });
  const served = registry.announced();
  const states: ModelState[] = [];
  for (const model of served) {
    const ep = registry.get(model)!.endpoints[0]!;
    const h = await checkEndpoint(ep.url, 5000, ep.apiKey, ep.engineType, { verifyKey: true });
    const fix =
      h.condition === 'key_rejected'
        ? `set "api_key" of ${model} in models.json to the engine's key`
        : h.condition === 'loading'
          ? 'wait for the engine to finish loading its model'
          : 'start the engine or fix the endpoint in models.json';
    checks.push(
      h.ok ? { ok: true, what: `engine for ${model} at ${ep.url} answers` } : { ok: false, what: `engine for ${model} at ${ep.url}: ${h.error}`, fix },
    );
    // The deep check: a real 1-token chat, by the engine's own name (a dead engine still lists its models).
    let deep: ReturnType<typeof readProbe> | undefined;
    if (h.ok && chatCompatible(registry.get(model)?.entry?.category)) {
      const t = { url: ep.url, model: ep.localModel ?? model, ...(ep.apiKey ? { apiKey: ep.apiKey } : {}) };
      deep = readProbe(await standaloneHealthProbe(registry, 15_000)(t), t);
      checks.push(
        deep.ok
          ? { ok: true, what: `${model} answers a 1-token chat at ${ep.url}` }
          : { ok: false, what: `${model} at ${ep.url} [${deep.code}]: ${deep.error}`, fix: DEEP_FIX[deep.code] },
      );
    }
    const failed = deep && !deep.ok ? { error: deep.error, condition: deep.code } : h.ok ? undefined : { error: h.error, condition: h.condition };
    const health = failed ? 'unhealthy' : 'healthy';
    const endpoint = {
      url: ep.url,
      engineType: ep.engineType ?? 'unknown',
      health,
      inFlight: 0,
      maxConcurrent: 0,
      consecutiveFailures: failed ? 1 : 0,
      ...(failed?.error ? { lastError: failed.error } : {}),
      ...(failed?.condition ? { condition: failed.condition } : {}),
    } as const;
    states.push({ id: model, enabled: true, health, endpoints: [endpoint], inFlight: 0, queued: 0, maxConcurrent: 0, maxQueue: 0 });
  }
  const off = registry
    .all()
    .filter((m) => !m.enabled)
    .map((m) => m.id);
  if (served.length === 0) {
    checks.push({
      ok: false,
      what: `nothing to serve: ${off.length ? `${off.length} model(s) found but none switched on (${off.slice(0, 5).join(', ')})` : 'no model in models.json and no engine found'}`,
      fix: off.length
        ? 'switch models on in the console (Engines & models)'
        : 'start an engine (for example `ollama serve`), or add one with `swan-provider engines --host HOST:PORT` and models.json',
    });
  } else {
    checks.push({ ok: true, what: `serving ${served.length} model(s): ${served.join(', ')}${off.length ? ` (${off.length} more found, switched off)` : ''}` });
  }
  // The agent's verdict on this home: what the checks above cannot say alone (routed? earning?). What the
  // hub registered is what the running agent kept from its last register ack (hub/hub-view.ts).
  const hubView = readHubView(homePath(o.home, 'hubView'));
  const catalogue = new Catalogue({ serviceUrl: () => serviceUrl, log: memoryLog().child('catalogue'), timeoutMs: 5000 });
  // The network's price list: a served model it has no rate for is not paid; one that cannot be read is unknown.
  const rates = new NetworkRates({ serviceUrl: () => serviceUrl, log: memoryLog().child('rates'), timeoutMs: 5000 });
  const [, priceList, self] = await Promise.all([catalogue.refresh(), rates.get(), readSelfCheck(o.home, registry, served)]);
  const net = rates.rateMap();
  const verdict = verdictOf({
    running: true,
    hasKey: Boolean(key) || inKeychain,
    hubEnabled: cfg.enable,
    link: err ? { state: 'backoff', reason: `hub ${dial.url} not reachable: ${err}` } : { state: 'connected' },
    pause: { paused: false },
    ...(status ? { providerStatus: status } : {}),
    models: [
      ...states,
      ...registry
        .all()
        .filter((m) => !m.enabled)
        .map((m) => ({ id: m.id, enabled: false, health: 'healthy' as const, endpoints: [] })),
      // Held back by a mapping check: shown to the verdict with the finding.
      ...registry
        .all()
        .filter((m) => m.enabled && registry.held(m.id))
        .map((m) => ({
          id: m.id,
          enabled: true,
          health: 'healthy' as const,
          endpoints: m.endpoints.map((ep) => ({
            url: ep.url,
            engineType: ep.engineType ?? ('unknown' as const),
            health: 'healthy' as const,
            inFlight: 0,
            maxConcurrent: 0,
            consecutiveFailures: 0,
          })),
          mapping: registry.mappingOf(m.id),
        })),
    ],
    catalogue: catalogue.view(catalogueSubjects(registry, engines)),
    ...(hubView?.registeredModels ? { registeredModels: hubView.registeredModels } : {}),
    ...(status?.earningsEnabled !== undefined ? { earningsEnabled: status.earningsEnabled } : {}),
    networkName: networkLabel(hubUrl),
    pricing:
      priceList.value === null
        ? { known: false, priced: [], ...(priceList.error ? { error: priceList.error } : {}) }
        : { known: true, priced: served.filter((m) => net.has(m)) },
    checks: self.inputs,
  });
  checks.push(...hubViewChecks(hubView));
  checks.push(
    ...verdictChecks(
      verdict,
      checks.some((c) => !c.ok && !c.unknown),
    ),
  );
  const selfCheck = selfCheckItems(self, verdict.routable);
  checks.push(...selfCheck.map(selfCheckLine));
  const bad = checks.filter((c) => !c.ok && !c.unknown).length;
  // "All good" and exit 0 only with every check passed and the verdict serving: never beside an unknown.
  const exit = bad || verdict.state !== 'serving' ? 1 : 0;
  if (o.json) {
    const { state, tone, label, headline, reasons, routable } = verdict;
    const report: DoctorReport = { exit, verdict: { state, tone, label, headline, codes: reasons.map((r) => r.code), reasons, routable }, checks, selfCheck };
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    return exit;
  }
  // Answers of the hub, the service and the engines are outside text: printed through forTerminal.
  for (const c of checks) process.stdout.write(forTerminal(`${c.ok ? '✓' : c.unknown ? '?' : '✗'} ${c.what}${c.fix ? `\n    → ${c.fix}` : ''}\n`));
  const unknown = checks.filter((c) => c.unknown).length;
  const notKnown = unknown ? ` (${unknown} thing(s) not known here: the lines marked ?)` : '';
  process.stdout.write(
    forTerminal(exit ? `${bad} problem(s) found. ${verdict.label}: ${verdict.headline}${notKnown}\n` : `All good: ${verdict.headline}${notKnown}\n`),
  );
  return exit;
}

/**
 * The verdict's findings the checks above do not already make: whether the network routes and pays, and
 * (when every check passed) anything else it finds, so "All good" is never printed beside a verdict that
 * is not serving.
 */
function verdictChecks(v: Verdict, failed: boolean): Check[] {
  return v.reasons
    .filter((r) => !(SELF_CHECK_CODES as readonly string[]).includes(r.code)) // said by the self-check's own lines
    .filter((r) => r.state === 'not_routable' || r.state === 'not_earning' || r.state === 'unknown' || !failed)
    .map((r) => ({ ok: false, what: r.text.replace(/\.$/, ''), ...(r.next ? { fix: r.next } : {}) }));
}

/** A self-check finding as a line: found is a problem, clear a pass, unknown said as unknown. */
function selfCheckLine(i: SelfCheckItem): Check {
  const what = `[${i.code}] ${i.detail.replace(/\.$/, '')}`;
  if (i.state === 'found') return { ok: false, what, ...(i.next ? { fix: i.next } : {}) };
  return i.state === 'clear' ? { ok: true, what } : { ok: false, unknown: true, what: `${what} (unknown)` };
}
