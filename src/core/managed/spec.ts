// What the owner asked this agent to run: one serve spec per model (`swan-provider models serve`, the
// console's Serve), kept in <home>/managed-engines.json. The file is the one place the wish is recorded, so
// `models serve` works whether or not an agent runs: a running agent sees the change at its next look and
// acts on it; an agent that starts later starts what the file names. The backends and their flags follow
// the Go provider's `models serve` (cmd/computing-provider/models_serve.go, internal/runtime/backend.go).
import { z } from 'zod';
import { homePath } from '../config/home-layout';
import { SharedJsonFile } from '../config/shared-json-file';

export const BACKENDS = ['llamacpp', 'vllm', 'sglang'] as const;
export type Backend = (typeof BACKENDS)[number];

/** The names owners type for a backend, as the Go provider accepts them (runtime/backend.go backendAliases). */
const BACKEND_ALIASES: Record<string, Backend> = {
  llama: 'llamacpp',
  'llama.cpp': 'llamacpp',
  'llama-cpp': 'llamacpp',
  llamaserver: 'llamacpp',
  'llama-server': 'llamacpp',
  gguf: 'llamacpp',
  sgl: 'sglang',
};

/** A backend name or alias → the backend; undefined when it is none of them. */
export function backendOf(name: string): Backend | undefined {
  const k = name.trim().toLowerCase();
  const b = BACKEND_ALIASES[k] ?? k;
  return (BACKENDS as readonly string[]).includes(b) ? (b as Backend) : undefined;
}

/** Why a serve request is refused, stable for programs and tests; the message says it for people. */
export type ServeErrorCode =
  'bad_model_id' | 'weights_required' | 'weights_missing' | 'bad_gpus' | 'llama_server_missing' | 'not_managed' | 'docker_unavailable';

export class ServeError extends Error {
  constructor(
    readonly code: ServeErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'ServeError';
  }
}

// A catalogue id ("meta-llama/Llama-3.1-8B-Instruct"): printable, no spaces or control characters, bounded.
const modelId = z
  .string()
  .min(1)
  .max(256)
  .regex(/^[\w.:@+/-]+$/, 'a model id is letters, digits and . _ - : @ + /');
/** "all", "none", or device indexes "0,1" (the Go provider's --gpus also takes "device=0,1"). */
export const GPUS = /^(all|none|(device=)?\d{1,3}(,\d{1,3}){0,63})$/;

export const serveSpecSchema = z
  .object({
    /** The catalogue id the model is announced under (llama-server's --alias, vLLM's --served-model-name). */
    id: modelId,
    backend: z.enum(BACKENDS),
    /** A GGUF file (llama.cpp) or a model folder (vLLM, SGLang). */
    weights: z.string().min(1).max(4096).optional(),
    gpus: z.string().regex(GPUS, 'GPUs are "all", "none" or device numbers such as 0,1').optional(),
    /** The context window of one request (llama.cpp: per slot; the server is given it × slots). */
    contextLength: z.number().int().min(64).max(10_000_000).optional(),
    /** Requests served at once (llama.cpp -np). */
    slots: z.number().int().min(1).max(256).optional(),
    /** The port on 127.0.0.1; a free one when not given. */
    port: z.number().int().min(1).max(65_535).optional(),
    /** The llama-server the owner pointed to (else [Agent] LlamaServer, else PATH). */
    binary: z.string().min(1).max(4096).optional(),
    /** Passed to the engine after our flags, as the Go provider does with its passthrough arguments. */
    args: z.array(z.string().max(4096)).max(64).default([]),
    /** The container image for vLLM / SGLang (default: the Go provider's). */
    image: z.string().min(1).max(512).optional(),
    addedAt: z.number().int().nonnegative(),
  })
  .strict();
export type ServeSpec = z.infer<typeof serveSpecSchema>;
export type ServeSpecInput = z.input<typeof serveSpecSchema>;

const desiredSchema = z.object({ engines: z.array(serveSpecSchema).max(64) });
export type DesiredEngines = z.infer<typeof desiredSchema>;

/** The home's managed-engines.json, shared by the CLI and the agent (each re-reads it when it changed). */
export function desiredFile(home: string): SharedJsonFile<DesiredEngines> {
  return new SharedJsonFile(homePath(home, 'managedEngines'), desiredSchema, () => ({ engines: [] }));
}

/** Checks a serve request; the spec as it will be recorded. */
export function parseServeSpec(input: ServeSpecInput): ServeSpec {
  const r = serveSpecSchema.safeParse(input);
  if (!r.success) {
    const i = r.error.issues[0];
    const field = String(i?.path[0] ?? '');
    const code: ServeErrorCode = field === 'gpus' ? 'bad_gpus' : 'bad_model_id';
    throw new ServeError(code, `${field || 'serve request'}: ${i?.message ?? 'not valid'}`);
  }
  if (r.data.backend === 'llamacpp' && !r.data.weights) {
    throw new ServeError(
      'weights_required',
      `llama.cpp serves one GGUF file: name it with --weights PATH (for example --weights ~/models/${r.data.id.split('/').pop()}.Q4_K_M.gguf).`,
    );
  }
  return r.data;
}

/** Records (or replaces) the spec for its id; returns whether it replaced one. */
export function addDesired(home: string, spec: ServeSpec): boolean {
  const f = desiredFile(home);
  const cur = f.read().value.engines;
  const replaced = cur.some((e) => e.id === spec.id);
  f.write({ engines: [...cur.filter((e) => e.id !== spec.id), spec] });
  return replaced;
}

/** Removes the spec for `id`; false when the file names no such engine. */
export function removeDesired(home: string, id: string): boolean {
  const f = desiredFile(home);
  const cur = f.read().value.engines;
  if (!cur.some((e) => e.id === id)) return false;
  f.write({ engines: cur.filter((e) => e.id !== id) });
  return true;
}

/** Whether two specs start the same engine (a change of any field restarts it). */
export function sameSpec(a: ServeSpec, b: ServeSpec): boolean {
  const strip = ({ addedAt: _a, ...rest }: ServeSpec) => JSON.stringify(rest);
  return strip(a) === strip(b);
}
