// How many requests an engine runs at once, read where the engine says it:
//   llama.cpp GET /props `total_slots` (-np) · SGLang GET /get_server_args `max_running_requests`
//   · vLLM: max_num_seqs is not published over HTTP, so its /metrics gauges (num_requests_running /
//     num_requests_waiting) serve as backpressure instead · Ollama: OLLAMA_NUM_PARALLEL, not published;
//     its documented default is 1 request per model (set a number in config.toml if you raised it).
// Anything else: unknown, and the agent's default applies.
import type { EngineType } from '../../shared/types';
import { fetchEngine, jsonObject, type GetResult } from './http';

export interface EngineCapacity {
  /** Requests the engine runs at once (its slots). */
  slots: number;
  /** Where the figure comes from, for the console ("llama.cpp /props total_slots"). */
  source: string;
}

/** vLLM's scheduler gauges: requests running and waiting inside the engine. */
export interface EngineLoad {
  running: number;
  waiting: number;
}

/** Ollama's documented default of OLLAMA_NUM_PARALLEL (requests per loaded model). */
export const OLLAMA_DEFAULT_PARALLEL = 1;

function positiveInt(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isInteger(v) && v > 0 && v <= 100_000 ? v : undefined;
}

/** llama.cpp /props body -> its slot count. */
export function llamaCppSlots(props: Record<string, unknown> | undefined): EngineCapacity | undefined {
  const n = positiveInt(props?.total_slots);
  return n ? { slots: n, source: 'llama.cpp /props total_slots' } : undefined;
}

/** SGLang /get_server_args body -> max_running_requests (null when SGLang sizes it itself). */
export function sglangSlots(args: Record<string, unknown> | undefined): EngineCapacity | undefined {
  const n = positiveInt(args?.max_running_requests);
  return n ? { slots: n, source: 'SGLang /get_server_args max_running_requests' } : undefined;
}

/** Sums a Prometheus gauge over its label sets (vllm:num_requests_running{model_name="…"} 3.0). */
export function promGauge(text: string, name: string): number | undefined {
  let total: number | undefined;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    if (rest[0] !== '{' && rest[0] !== ' ') continue;
    const value = Number(rest.slice(rest.lastIndexOf(' ') + 1));
    if (Number.isFinite(value) && value >= 0) total = (total ?? 0) + value;
  }
  return total;
}

/** vLLM /metrics text -> running/waiting, when both gauges are there. */
export function vllmLoad(r: GetResult): EngineLoad | undefined {
  if (r.status !== 200) return undefined;
  const running = promGauge(r.body, 'vllm:num_requests_running');
  const waiting = promGauge(r.body, 'vllm:num_requests_waiting');
  return running !== undefined && waiting !== undefined ? { running, waiting } : undefined;
}

/**
 * What the engine at `base` says about its capacity (and, for vLLM, its load). Called by the health
 * check after the engine answered, so every route here is best effort.
 */
export async function readCapacity(
  base: string,
  type: EngineType | undefined,
  timeoutMs: number,
  apiKey: string | undefined,
  props?: Record<string, unknown>,
): Promise<{ capacity?: EngineCapacity; load?: EngineLoad }> {
  const get = (path: string) => fetchEngine({ url: base, path, timeoutMs, ...(apiKey ? { apiKey } : {}) });
  if (props) return { capacity: llamaCppSlots(props) };
  if (type === 'sglang') return { capacity: sglangSlots(jsonObject(await get('/get_server_args'))) };
  if (type === 'ollama') return { capacity: { slots: OLLAMA_DEFAULT_PARALLEL, source: 'Ollama default OLLAMA_NUM_PARALLEL (documented)' } };
  if (type === 'vllm') return { load: vllmLoad(await get('/metrics')) };
  return {};
}
