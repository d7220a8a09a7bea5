// The engines this agent runs for the owner (src/core/managed/), as the console and `models ps` show them.

/** starting: launched, not answering yet; serving: answers; restarting: ended, started again after a wait;
 *  failed: cannot be started (code and lastError say why); stopped: the owner stopped it. */
export type ManagedPhaseView = 'starting' | 'serving' | 'restarting' | 'failed' | 'stopped';

export interface ManagedEngineView {
  /** The catalogue id it is announced under. */
  id: string;
  backend: 'llamacpp' | 'vllm' | 'sglang';
  phase: ManagedPhaseView;
  url?: string;
  pid?: number;
  /** The file or folder it serves (shown beside the id; never the model's name). */
  weights?: string;
  gpus?: string;
  contextLength?: number;
  slots?: number;
  /** Restarts after a crash since the agent started it. */
  restarts: number;
  lastError?: string;
  /** Stable code of the last failure: engine_crashed, start_failed, llama_server_missing, weights_missing, docker_unavailable. */
  code?: string;
  servingSince?: number;
  nextRestartAt?: number;
  /** Stopped while a GPU it runs on is paused; started again when that GPU serves. */
  held?: boolean;
  /** What runs, as a command line (the key left out). */
  command: string;
}

/** One model of "what this GPU should serve" (src/core/fit/recommend.ts), as the console shows it. */
export interface RecommendRowView {
  modelId: string;
  name: string;
  /** fits | too_large | unknown: unknown is never counted as fits (fitCode and fitReason say why). */
  fit: 'fits' | 'too_large' | 'unknown';
  fitCode?: string;
  fitReason?: string;
  /** GPU memory the model needs at the planned context and slots, and where the figure came from. */
  needBytes?: number;
  basis?: 'estimate' | 'network';
  /** The estimate is exact (a GGUF header's tensor sizes) rather than from parameters × dtype. */
  exact: boolean;
  /** USD a day serving it here would earn by the network's figures (simulated on a dev hub); null: no figure. */
  earnHereDaily: number | null;
  requests24h: number | null;
  demandTrend: string | null;
  onlineProviders: number | null;
  /** How much of it is in the models folder: verified (every file matched the network's hash), hashed, partial, none. */
  onDisk: 'verified' | 'hashed' | 'partial' | 'none';
  /** In the Swan model repository (it can be downloaded from here). */
  inRepository: boolean;
  sizeBytes: number;
  contextLength: number;
  slots: number;
}

export interface RecommendView {
  serviceUrl: string;
  /** The GPU memory planned for, in words ("1 GPU(s), 24.0 GiB in all: …", or that none reported it). */
  gpu: string;
  budgetBytes: number | null;
  modelsDir: string;
  notes: string[];
  rows: RecommendRowView[];
}

/** listing → checking → downloading → verified | hashed; or failed (code, error) or cancelled. */
export type DownloadPhaseView = 'listing' | 'checking' | 'downloading' | 'verified' | 'hashed' | 'failed' | 'cancelled';

/** A model download the agent runs (the console's Download; `models download` runs its own in the CLI). */
export interface ModelDownloadView {
  modelId: string;
  phase: DownloadPhaseView;
  file?: string;
  fileIndex: number;
  fileCount: number;
  doneBytes: number;
  totalBytes: number;
  /** Bytes per second over the last few seconds (0 before there is a figure). */
  rateBytesPerSec: number;
  /** Seconds left at that rate; null while unknown. */
  etaSeconds: number | null;
  startedAt: number;
  finishedAt?: number;
  /** Stable code of a failure (hash_mismatch, no_disk_space, connection_lost, repository_unreachable, …). */
  code?: string;
  error?: string;
  /** The model's folder, and the weights a serve would use (llama.cpp: its GGUF), once it is on disk. */
  dir?: string;
  weights?: string;
  compositeHash?: string;
}
