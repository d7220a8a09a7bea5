// Engine type detection from each engine's own identity routes, checked by content (LM Studio answers
// 200 to every unknown path, so a 200 alone proves nothing):
//   sglang /get_server_args · vllm /version · llama.cpp /props · ollama /api/tags or "Ollama is running"
//   · LM Studio /api/v0/models · TGI /info · else an OpenAI-compatible /v1/models -> 'openai'.
// A llama-server still loading its model answers 503 {"error":{"message":"Loading model",
// "type":"unavailable_error"}} on every route, /v1/models and /health included: that is an engine that
// is loading (EngineInfo.loading), not "something that is not an inference engine".
import type { EngineInfo, EngineType } from '../../shared/types';
import { fetchEngine, jsonObject, type GetResult } from './http';
import { isLoadingAnswer } from './health';
import { normalizeBaseUrl } from './url';
import { modelMetaOf } from './model-meta';

/** Default ports of local engines (DESIGN.md). TGI shares 8080 with llama.cpp. */
export const DEFAULT_PORTS: Readonly<Record<Exclude<EngineType, 'openai' | 'unknown'>, readonly number[]>> = {
  vllm: [8000],
  sglang: [30000],
  ollama: [11434],
  llamacpp: [8080],
  lmstudio: [1234],
  jan: [1337],
  tgi: [8080, 3000],
};

/** The variable that replaces the default ports auto-discovery probes (comma-separated loopback URLs; empty: none). */
export const DISCOVERY_URLS_ENV = 'SWAN_DISCOVERY_URLS';

/**
 * What auto-discovery probes: http://127.0.0.1:<port> for every default port, once each; or the loopback
 * addresses SWAN_DISCOVERY_URLS names instead (an engine on a port of its own on this machine, or none at all:
 * the test suites set it empty so an engine the machine happens to run is never taken for one of theirs).
 * Discovery never probes beyond this machine by itself: other entries are left out.
 */
export function defaultProbeUrls(host = '127.0.0.1', env: NodeJS.ProcessEnv = process.env): string[] {
  const given = env[DISCOVERY_URLS_ENV];
  if (given !== undefined)
    return given
      .split(',')
      .map((u) => u.trim())
      .filter(isLoopbackUrl);
  const ports = new Set(Object.values(DEFAULT_PORTS).flat());
  return [...ports].sort((a, b) => a - b).map((p) => `http://${host}:${p}`);
}

function isLoopbackUrl(raw: string): boolean {
  try {
    const u = new URL(raw);
    return (u.protocol === 'http:' || u.protocol === 'https:') && !u.username && !u.password && ['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname);
  } catch {
    return false;
  }
}

const OWNED_BY: Record<string, EngineType> = { vllm: 'vllm', sglang: 'sglang', llamacpp: 'llamacpp', library: 'ollama', organization_owner: 'lmstudio' };

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v ? v : undefined;
}

function modelList(models: Record<string, unknown> | undefined): { ids: string[]; owners: string[] } | undefined {
  const data = models?.data;
  if (!Array.isArray(data)) return undefined;
  const items = data.filter((m): m is Record<string, unknown> => !!m && typeof m === 'object');
  return { ids: items.map((m) => str(m.id)).filter((x): x is string => !!x), owners: items.map((m) => str(m.owned_by) ?? '') };
}

interface Probes {
  models: GetResult;
  serverArgs: GetResult;
  version: GetResult;
  tags: GetResult;
  root: GetResult;
  props: GetResult;
  lmModels: GetResult;
  info: GetResult;
}

function classify(p: Probes, port: number): { type: EngineType; version?: string } | undefined {
  const args = jsonObject(p.serverArgs);
  if (args && ('model_path' in args || 'tp_size' in args)) return { type: 'sglang' };
  const version = jsonObject(p.version);
  if (version && str(version.version)) return { type: 'vllm', version: str(version.version) };
  // llama.cpp before Ollama: /props is llama-server's own (it answers /api/tags 404, and its /v1/models
  // carries an Ollama-style "models" list beside "data").
  const props = jsonObject(p.props);
  if (props && ('default_generation_settings' in props || 'total_slots' in props)) return { type: 'llamacpp', version: str(props.build_info) };
  const tags = jsonObject(p.tags);
  if ((tags && Array.isArray(tags.models) && !('data' in tags)) || (p.root.status === 200 && p.root.body.trim() === 'Ollama is running')) {
    return { type: 'ollama' };
  }
  const lm = jsonObject(p.lmModels);
  if (lm && Array.isArray(lm.data)) return { type: 'lmstudio' };
  const info = jsonObject(p.info);
  if (info && str(info.model_id) && ('router' in info || 'max_total_tokens' in info)) return { type: 'tgi', version: str(info.version) };
  const list = modelList(jsonObject(p.models));
  if (!list) return undefined;
  const owner = list.owners.map((o) => OWNED_BY[o]).find(Boolean);
  if (owner) return { type: owner };
  if (list.ids.length && list.owners.every((o, i) => o === list.ids[i])) return { type: 'tgi' };
  return { type: port === DEFAULT_PORTS.jan[0] ? 'jan' : 'openai' };
}

/** Extra version routes some engines have. */
async function versionOf(get: (path: string) => Promise<GetResult>, type: EngineType): Promise<string | undefined> {
  const path = type === 'sglang' ? '/get_server_info' : type === 'ollama' ? '/api/version' : undefined;
  if (!path) return undefined;
  return str(jsonObject(await get(path))?.version);
}

/**
 * Probe one base URL. null when nothing listens there; an EngineInfo with reachable:false and an
 * error when something answers that is not an inference engine.
 */
export async function detectEngine(baseUrl: string, timeoutMs = 800, origin: EngineInfo['origin'] = 'probe', apiKey?: string): Promise<EngineInfo | null> {
  const base = normalizeBaseUrl(baseUrl);
  const port = Number(new URL(base).port || (base.startsWith('https') ? 443 : 80));
  const get = (path: string) => fetchEngine({ url: base, path, timeoutMs, ...(apiKey ? { apiKey } : {}) });
  const models = await get('/v1/models');
  if (models.refused) return null;
  if (models.status === 0 && models.error?.startsWith('no answer')) {
    return { url: base, type: 'unknown', models: [], reachable: false, origin, error: `nothing answered at ${base} within ${timeoutMs} ms` };
  }
  if (isLoadingAnswer(models)) {
    // llama.cpp's error type names; the models are unknown until it has loaded.
    const llama = /unavailable_error/.test(models.body);
    return {
      url: base,
      type: llama ? 'llamacpp' : 'unknown',
      models: [],
      reachable: false,
      loading: true,
      origin,
      error: `the engine at ${base} is loading its model (503 Loading model); it is used once loaded`,
    };
  }
  const [serverArgs, version, tags, root, props, lmModels, tgiInfo] = await Promise.all([
    get('/get_server_args'),
    get('/version'),
    get('/api/tags'),
    get('/'),
    get('/props'),
    get('/api/v0/models'),
    get('/info'),
  ]);
  const probes: Probes = { models, serverArgs, version, tags, root, props, lmModels, info: tgiInfo };
  const found = classify(probes, port);
  if (!found) {
    const what = models.status ? `GET /v1/models answered ${models.status}` : `GET /v1/models failed (${models.error ?? 'no answer'})`;
    return {
      url: base,
      type: 'unknown',
      models: [],
      reachable: false,
      origin,
      error: `something answers at ${base} but it is not an inference engine (${what})`,
    };
  }
  const ids = new Set(modelList(jsonObject(models))?.ids ?? []);
  if (found.type === 'ollama') {
    const list = jsonObject(tags)?.models;
    if (Array.isArray(list))
      for (const m of list) if (m && typeof m === 'object' && str((m as Record<string, unknown>).name)) ids.add((m as Record<string, string>).name as string);
  }
  const info: EngineInfo = { url: base, type: found.type, models: [...ids], reachable: true, lastSeen: Date.now(), origin };
  const meta = modelMetaOf({ models: jsonObject(models), tags: jsonObject(tags), lmModels: found.type === 'lmstudio' ? jsonObject(lmModels) : undefined });
  for (const name of Object.keys(meta)) if (!ids.has(name)) delete meta[name];
  if (Object.keys(meta).length) info.modelMeta = meta;
  const v = found.version ?? (await versionOf(get, found.type));
  if (v) info.version = v;
  return info;
}
