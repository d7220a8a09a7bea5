// What the Models page gets back when it acts on one model: a warmup's result, a test prompt's id.

/** Why a warmup failed (stable; the error says it for people, with what to fix). */
export type WarmupProblem =
  'not_served' | 'unhealthy' | 'engine_error' | 'no_reply' | 'wrong_role' | 'leaked_delimiter' | 'role_boundary' | 'budget_exhausted' | 'empty_reply';

export interface WarmupResult {
  success: boolean;
  loadTimeMs: number;
  memoryMb: number;
  error?: string;
  code?: WarmupProblem;
  /** It serves, but something is worth knowing (a reasoning model spent the greeting thinking). */
  warning?: string;
}

/** A test prompt's request id (its stream arrives as request.update / request.text events). */
export interface TryResult {
  id: string;
}
