// Token usage as engines report it: OpenAI `usage` objects, llama.cpp `timings`, and a rough estimate
// for engines that report nothing.
import type { TokenUsage } from './types';

function count(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0;
}

/** `usage` of a chunk or response, when present and non-zero (zeros are Ollama placeholders). */
export function readUsage(value: unknown): TokenUsage | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const u = value as Record<string, unknown>;
  const promptTokens = count(u.prompt_tokens);
  const completionTokens = count(u.completion_tokens);
  return promptTokens || completionTokens ? { promptTokens, completionTokens } : undefined;
}

/** llama.cpp `timings`: prompt = prompt_n + cache_n, completion = predicted_n. */
export function readTimings(value: unknown): TokenUsage | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const t = value as Record<string, unknown>;
  const promptTokens = count(t.prompt_n) + count(t.cache_n);
  const completionTokens = count(t.predicted_n);
  return promptTokens || completionTokens ? { promptTokens, completionTokens } : undefined;
}

/** A rough token count (about 4 characters a token) for engines that give no usage. */
export function estimateTokens(text: string): number {
  return text.length === 0 ? 0 : Math.max(1, Math.ceil(text.length / 4));
}
