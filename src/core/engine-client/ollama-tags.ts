// What an Ollama engine here has on disk, with sizes: GET {engine}/api/tags → {models: [{name, model,
// modified_at, size (bytes), digest, details: {format, family, parameter_size "7.6B",
// quantization_level "Q4_K_M"}}]} (Ollama API docs, "List Local Models"). Validated entry by entry:
// an entry that is not well formed is skipped, a size that is not a byte count is left unknown.
import { z } from 'zod';
import { AnswerError } from '../http/answer-error';
import { fetchEngine } from './http';
import { JSON_LIMITS, parseJson } from '../http/bounded-json';

export interface OllamaLocalModel {
  name: string;
  /** Bytes on disk; undefined when Ollama did not say. */
  sizeBytes?: number;
  parameterSize?: string;
  quantization?: string;
}

const label = z.string().trim().min(1).max(32).optional().catch(undefined);
const entry = z.object({
  name: z.string().min(1).max(256),
  size: z
    .number()
    .int()
    .positive()
    .max(2 ** 50)
    .optional()
    .catch(undefined),
  details: z.object({ parameter_size: label, quantization_level: label }).passthrough().optional().catch(undefined),
});
const answer = z.object({ models: z.array(z.unknown()).max(10_000) }).passthrough();

export function parseOllamaTags(json: unknown): OllamaLocalModel[] {
  const a = answer.safeParse(json);
  if (!a.success) throw new AnswerError('no_model_list', 'the /api/tags answer has no models list', 'models');
  const out: OllamaLocalModel[] = [];
  for (const raw of a.data.models) {
    const e = entry.safeParse(raw);
    if (!e.success) continue;
    const d = e.data.details;
    out.push({
      name: e.data.name,
      ...(e.data.size !== undefined ? { sizeBytes: e.data.size } : {}),
      ...(d?.parameter_size ? { parameterSize: d.parameter_size } : {}),
      ...(d?.quantization_level ? { quantization: d.quantization_level } : {}),
    });
  }
  return out;
}

/** The models on disk of one Ollama engine found here; throws a plain-words error. */
export async function ollamaTags(engineUrl: string, timeoutMs = 3000): Promise<OllamaLocalModel[]> {
  const r = await fetchEngine({ url: engineUrl, path: '/api/tags', timeoutMs });
  if (r.status !== 200)
    throw new Error(r.status ? `${engineUrl}/api/tags answered HTTP ${r.status}` : `could not reach ${engineUrl}/api/tags (${r.error ?? 'no answer'})`);
  let json: unknown;
  try {
    json = parseJson(r.body, JSON_LIMITS.engine);
  } catch {
    throw new Error(`${engineUrl}/api/tags answered with something that is not JSON`);
  }
  return parseOllamaTags(json);
}
