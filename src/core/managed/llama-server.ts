// llama.cpp's llama-server as a process this agent runs: where the program is, and the command line and
// environment for one serve spec. The flags are the Go provider's (internal/runtime/backend.go): --alias is
// the catalogue id (without it the server names the model by its file path, which the hub does not route),
// every layer offloaded unless the owner chose no GPU; our own: 127.0.0.1 only, a port of ours, and an API
// key passed in the environment (LLAMA_API_KEY), not on the command line other users can read.
import fs from 'node:fs';
import path from 'node:path';
import { ServeError, type ServeSpec } from './spec';

const EXE = process.platform === 'win32' ? 'llama-server.exe' : 'llama-server';

/** What the owner is told when no llama-server is found. */
export const GET_LLAMA_SERVER =
  'Get one: download a llama.cpp release for your system from https://github.com/ggml-org/llama.cpp/releases ' +
  '(the CUDA build for NVIDIA, the HIP/ROCm or Vulkan build for AMD), unpack it, and put its folder on PATH, ' +
  'or name the file: `swan-provider models serve --llama-server /path/to/llama-server …`, or [Agent] LlamaServer in config.toml. ' +
  '(macOS and Linux: `brew install llama.cpp` puts it on PATH.)';

function executable(file: string): boolean {
  try {
    const st = fs.statSync(file);
    if (!st.isFile()) return false;
    if (process.platform !== 'win32') fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The llama-server to run: the one the spec names (the owner pointed to it), else the configured one,
 * else the first on PATH. Throws `llama_server_missing` with how to get one.
 */
export function findLlamaServer(o: { spec?: string; configured?: string; env: NodeJS.ProcessEnv }): string {
  for (const [given, where] of [
    [o.spec, 'the llama-server you named'],
    [o.configured, '[Agent] LlamaServer'],
  ] as const) {
    if (!given) continue;
    const abs = path.resolve(given);
    if (executable(abs)) return abs;
    throw new ServeError('llama_server_missing', `${where} (${abs}) is not an executable file. ${GET_LLAMA_SERVER}`);
  }
  for (const dir of (o.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const f = path.join(dir, EXE);
    if (executable(f)) return f;
  }
  throw new ServeError('llama_server_missing', `No llama-server was found on PATH. ${GET_LLAMA_SERVER}`);
}

/** CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES for a --gpus choice ("all" and unset: the engine sees every GPU). */
export function gpuEnv(gpus: string | undefined): Record<string, string> {
  if (!gpus || gpus === 'all') return {};
  const list = gpus === 'none' ? '' : gpus.replace(/^device=/, '');
  return { CUDA_VISIBLE_DEVICES: list, HIP_VISIBLE_DEVICES: list };
}

export interface LlamaCommand {
  binary: string;
  args: string[];
  /** Added to the agent's environment for the child (the key, the GPUs). */
  env: Record<string, string>;
}

/** The command line of one managed llama-server. */
export function llamaCommand(spec: ServeSpec, o: { binary: string; port: number; apiKey: string }): LlamaCommand {
  const args = ['-m', path.resolve(spec.weights ?? ''), '--alias', spec.id, '--host', '127.0.0.1', '--port', String(o.port)];
  // Every layer on the GPUs chosen; none when the owner chose no GPU (a CPU build ignores the flag).
  args.push('-ngl', spec.gpus === 'none' ? '0' : '999');
  // llama-server's -c is the whole cache, shared by the slots: one request's window × the slots. A window
  // without a slot count is one slot (so each request really gets the window asked for).
  const slots = spec.slots ?? (spec.contextLength !== undefined ? 1 : undefined);
  if (slots !== undefined) args.push('-np', String(slots));
  if (spec.contextLength !== undefined) args.push('-c', String(spec.contextLength * (slots ?? 1)));
  args.push(...spec.args);
  return { binary: o.binary, args, env: { LLAMA_API_KEY: o.apiKey, ...gpuEnv(spec.gpus) } };
}

/** A command as a shell line (for --dry-run and the log), the key left out. */
export function commandLine(c: { binary: string; args: string[]; env?: Record<string, string> }): string {
  const q = (s: string) => (/^[\w./:=,@+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
  const env = Object.entries(c.env ?? {}).map(([k, v]) => `${k}=${/KEY/.test(k) ? '<key>' : q(v)}`);
  return [...env, q(c.binary), ...c.args.map(q)].join(' ');
}
