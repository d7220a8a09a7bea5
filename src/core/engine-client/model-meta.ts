// What an engine says about each model it serves, from answers discovery already has: llama.cpp's
// /v1/models `meta` (n_params, ftype), Ollama's /api/tags `details` (family, parameter_size,
// quantization_level), LM Studio's /api/v0/models (arch, quantization). Catalogue matching trusts these,
// not the look of a name (a file called "llama-3.1-8b.gguf" may hold anything).
import type { EngineModelMeta } from '../../shared/types';

function text(v: unknown): string | undefined {
  return typeof v === 'string' && v.trim() && v.length <= 64 ? v.trim() : undefined;
}

/** "8.0B" → 8e9, "567M" → 5.67e8, "1.5b" → 1.5e9; undefined when it is not such a figure. */
export function parameterCount(size: unknown): number | undefined {
  if (typeof size === 'number') return Number.isFinite(size) && size > 0 ? size : undefined;
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kmbt])\s*$/i.exec(typeof size === 'string' ? size : '');
  if (!m) return undefined;
  const scale = { k: 1e3, m: 1e6, b: 1e9, t: 1e12 }[m[2]!.toLowerCase() as 'k' | 'm' | 'b' | 't'];
  return Number(m[1]) * scale;
}

function meta(o: { family?: unknown; parameters?: unknown; quantization?: unknown }): EngineModelMeta | undefined {
  const family = text(o.family);
  const parameters = parameterCount(o.parameters);
  const quantization = text(o.quantization);
  if (!family && parameters === undefined && !quantization) return undefined;
  return { ...(family ? { family } : {}), ...(parameters !== undefined ? { parameters } : {}), ...(quantization ? { quantization } : {}) };
}

function items(v: unknown): Array<Record<string, unknown>> {
  return Array.isArray(v) ? v.filter((x): x is Record<string, unknown> => !!x && typeof x === 'object').slice(0, 1000) : [];
}

/** model name → what the engine says about it, from the bodies of /v1/models, /api/tags and /api/v0/models. */
export function modelMetaOf(bodies: {
  models?: Record<string, unknown>;
  tags?: Record<string, unknown>;
  lmModels?: Record<string, unknown>;
}): Record<string, EngineModelMeta> {
  const out: Record<string, EngineModelMeta> = {};
  const put = (name: unknown, m: EngineModelMeta | undefined) => {
    const n = text(name) ?? (typeof name === 'string' && name.length <= 1024 ? name : undefined);
    if (n && m) out[n] = { ...out[n], ...m };
  };
  // llama.cpp: {data: [{id, meta: {n_params, ftype}}]}
  for (const m of items(bodies.models?.data)) {
    const md = m.meta && typeof m.meta === 'object' ? (m.meta as Record<string, unknown>) : undefined;
    if (md) put(m.id, meta({ parameters: md.n_params, quantization: md.ftype }));
  }
  // Ollama (llama.cpp mirrors the shape with empty strings): {models: [{name, details: {family, parameter_size, quantization_level}}]}
  for (const m of items(bodies.tags?.models)) {
    const d = m.details && typeof m.details === 'object' ? (m.details as Record<string, unknown>) : undefined;
    if (d) put(m.name, meta({ family: d.family, parameters: d.parameter_size, quantization: d.quantization_level }));
  }
  // LM Studio: {data: [{id, arch, quantization}]}
  for (const m of items(bodies.lmModels?.data)) put(m.id, meta({ family: m.arch, quantization: m.quantization }));
  return out;
}
