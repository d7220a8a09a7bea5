// vLLM and SGLang as the Go provider runs them (internal/runtime/backend.go, docker.go): a container of the
// backend's image, the weights folder mounted read-only, the server's port published on 127.0.0.1 only, the
// GPUs chosen, and labels that say the container is ours (only labelled containers are ever stopped). Here:
// the container's configuration, and the `docker run` line `models serve --dry-run` prints for it.
import path from 'node:path';
import type { ServeSpec } from './spec';

/** The labels on every container this agent creates; a container without LABEL_MANAGED is never touched. */
export const LABEL_MANAGED = 'io.swanchain.provider-console.managed';
export const LABEL_MODEL = 'io.swanchain.provider-console.model-id';
export const LABEL_BACKEND = 'io.swanchain.provider-console.backend';

interface ContainerBackend {
  image: string;
  port: number;
  entrypoint?: string[];
  weightsTarget: string;
  args(spec: ServeSpec): string[];
}

/** How many GPUs a --gpus choice names (0 for all / none / unset: the backend's own default). */
function gpuCount(gpus: string | undefined): number {
  if (!gpus || gpus === 'all' || gpus === 'none') return 0;
  return gpus
    .replace(/^device=/, '')
    .split(',')
    .filter(Boolean).length;
}

const BACKENDS: Record<'vllm' | 'sglang', ContainerBackend> = {
  vllm: {
    image: 'vllm/vllm-openai:latest',
    port: 8000,
    weightsTarget: '/models',
    args: (s) => [
      '--model',
      '/models',
      // Without it vLLM serves the model under its mount path, which the hub does not route.
      '--served-model-name',
      s.id,
      '--host',
      '0.0.0.0',
      '--port',
      '8000',
      ...(s.contextLength ? ['--max-model-len', String(s.contextLength)] : []),
      ...(gpuCount(s.gpus) > 1 ? ['--tensor-parallel-size', String(gpuCount(s.gpus))] : []),
    ],
  },
  sglang: {
    image: 'lmsysorg/sglang:latest',
    port: 30000,
    entrypoint: ['python3', '-m', 'sglang.launch_server'],
    weightsTarget: '/models',
    args: (s) => [
      '--model-path',
      '/models',
      '--served-model-name',
      s.id,
      '--host',
      '0.0.0.0',
      '--port',
      '30000',
      ...(s.contextLength ? ['--context-length', String(s.contextLength)] : []),
      ...(gpuCount(s.gpus) > 1 ? ['--tp', String(gpuCount(s.gpus))] : []),
    ],
  },
};

/** A container's name for a model id ("meta-llama/Llama-3.1-8B" → "swan-meta-llama-llama-3.1-8b"). */
export function containerName(id: string): string {
  return `swan-${id
    .toLowerCase()
    .replace(/[^a-z0-9_.-]+/g, '-')
    .replace(/^-+|-+$/g, '')}`.slice(0, 120);
}

export interface ContainerConfig {
  name: string;
  image: string;
  entrypoint?: string[];
  cmd: string[];
  labels: Record<string, string>;
  /** The server's port inside the container, published on 127.0.0.1:hostPort. */
  containerPort: number;
  hostPort: number;
  /** host path → container path, read-only. */
  bind: string;
  /** undefined: no GPU; 'all'; or device ids. */
  gpus?: 'all' | string[];
  env: string[];
}

/** The container for a vLLM or SGLang spec (the engine's key in its environment, never in the command). */
export function containerConfig(spec: ServeSpec, o: { hostPort: number; apiKey?: string }): ContainerConfig {
  if (spec.backend === 'llamacpp') throw new Error('llama.cpp runs as a process here, not a container');
  const b = BACKENDS[spec.backend];
  const gpus = !spec.gpus || spec.gpus === 'all' ? 'all' : spec.gpus === 'none' ? undefined : spec.gpus.replace(/^device=/, '').split(',');
  return {
    name: containerName(spec.id),
    image: spec.image ?? b.image,
    ...(b.entrypoint ? { entrypoint: b.entrypoint } : {}),
    cmd: [...b.args(spec), ...spec.args],
    labels: { [LABEL_MANAGED]: 'true', [LABEL_MODEL]: spec.id, [LABEL_BACKEND]: spec.backend },
    containerPort: b.port,
    hostPort: o.hostPort,
    bind: `${path.resolve(spec.weights ?? '.')}:${b.weightsTarget}:ro`,
    ...(gpus ? { gpus } : {}),
    // vLLM and SGLang read their key from the environment (VLLM_API_KEY; SGLang's --api-key is not read from it,
    // so SGLang answers without one, on 127.0.0.1 only).
    env: o.apiKey && spec.backend === 'vllm' ? [`VLLM_API_KEY=${o.apiKey}`] : [],
  };
}

/** The same container as a `docker run` argument list (for --dry-run: what an owner can paste into a shell). */
export function dockerRunArgs(c: ContainerConfig): string[] {
  const args = ['run', '--detach', '--name', c.name];
  for (const [k, v] of Object.entries(c.labels)) args.push('--label', `${k}=${v}`);
  args.push('--publish', `127.0.0.1:${c.hostPort}:${c.containerPort}`);
  if (c.gpus) args.push('--gpus', c.gpus === 'all' ? 'all' : `"device=${c.gpus.join(',')}"`);
  args.push('--shm-size', '4g', '--ipc', 'host', '--volume', c.bind);
  for (const e of c.env) args.push('--env', e.replace(/=.*/, '=<key>'));
  if (c.entrypoint?.[0]) args.push('--entrypoint', c.entrypoint[0]);
  args.push(c.image, ...(c.entrypoint?.slice(1) ?? []), ...c.cmd);
  return args;
}
