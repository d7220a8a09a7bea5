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
  /** What runs, as a command line (the key left out). */
  command: string;
}
