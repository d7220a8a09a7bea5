// Which processes use the GPU, and which of them are our engines: the pause feature tells the
// owner's game or other apps apart from vLLM, Ollama & co.
import fs from 'node:fs';
import path from 'node:path';
import type { GpuProcess } from '../../shared/types';
import type { Logger } from '../base/log';
import { CodedError } from '../../shared/bridge-error';
import { CSV_FORMAT, parseComputeApps, PROCESS_FIELDS } from './nvidia-parse';
import { findOnPath, runTool } from './run-tool';
import { explainNvidiaFailure } from './tool-notes';

export interface ListProcessesOptions {
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
  log?: Logger;
  /** Pids of engines the agent knows it runs (matched before names). */
  enginePids?: Iterable<number>;
}

/** Why nvidia-smi could not say: it did not answer in time, could not be started, or failed. */
export type GpuToolErrorCode = 'timeout' | 'not_started' | 'tool_failed';

export class GpuToolError extends CodedError<GpuToolErrorCode> {
  override name = 'GpuToolError';
}

/**
 * Executable names of inference engines. vLLM and SGLang retitle their processes
 * ('VLLM::EngineCore', 'sglang::scheduler'), which is what nvidia-smi shows for them.
 */
const ENGINE_NAME =
  /^(vllm|sglang|ollama|ollama_llama_server|llama-server|llama_server|llama-cpp-server|lms|lm studio|lmstudio|lm-studio|text-generation-launcher|text-generation-server|text-generation-router|koboldcpp|tabbyapi|aphrodite|jan)\b/i;
/** A Python (or uv/conda) process is an engine when its command line runs one. */
const ENGINE_MODULE = /\b(vllm|sglang|text_generation_server|llama_cpp\.server|aphrodite|tabbyapi|exllamav2)\b/i;
const INTERPRETER = /^(python\d*(\.\d+)*|pythonw?|uv|conda|pt_main_thread)$/i;

function baseName(processName: string): string {
  const base = path.win32.basename(path.posix.basename(processName.trim()));
  return base.replace(/\.exe$/i, '');
}

/** Reads /proc/<pid>/cmdline (Linux). Empty when unavailable (other OS, process gone, no access). */
function commandLine(pid: number): string {
  if (process.platform !== 'linux') return '';
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').slice(0, 4096);
  } catch {
    return '';
  }
}

export function isEngineProcess(name: string, pid: number, enginePids?: ReadonlySet<number>): boolean {
  if (enginePids?.has(pid)) return true;
  const base = baseName(name);
  if (ENGINE_NAME.test(base)) return true;
  if (INTERPRETER.test(base)) return ENGINE_MODULE.test(commandLine(pid));
  return false;
}

/**
 * Compute processes on NVIDIA GPUs. No nvidia-smi -> [] (nothing to report). A failing or hung
 * nvidia-smi throws GpuToolError: "no processes" must not be confused with "could not look".
 */
export async function listGpuProcesses(opts: ListProcessesOptions = {}): Promise<GpuProcess[]> {
  const env = opts.env ?? process.env;
  const timeoutMs = opts.timeoutMs ?? 5000;
  const file = findOnPath('nvidia-smi', env);
  if (!file) return [];
  const res = await runTool(file, [`--query-compute-apps=${PROCESS_FIELDS.join(',')}`, CSV_FORMAT], { env, timeoutMs });
  if (!res.ok) {
    const msg = explainNvidiaFailure(res, timeoutMs);
    opts.log?.warn(msg);
    throw new GpuToolError(res.timedOut ? 'timeout' : res.spawnError ? 'not_started' : 'tool_failed', msg);
  }
  const pids = opts.enginePids ? new Set(opts.enginePids) : undefined;
  return parseComputeApps(res.stdout).map((p) => ({
    pid: p.pid,
    name: p.name,
    ...(p.gpuUuid ? { gpuUuid: p.gpuUuid } : {}),
    usedMemoryMb: p.usedMemoryMb,
    isEngine: isEngineProcess(p.name, p.pid, pids),
  }));
}
