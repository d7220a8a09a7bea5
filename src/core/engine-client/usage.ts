// Token usage as engines report it: OpenAI `usage` objects, llama.cpp `timings`, and a rough estimate
// for engines that report nothing.
import type { TokenUsage } from './types';

function count(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0;
}

/**
 * `usage` of a chunk or response, when present and non-zero (zeros are Ollama placeholders). The image and
 * realtime APIs' names (input_tokens / output_tokens) count when the chat names are absent.
 */
export function readUsage(value: unknown): TokenUsage | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const u = value as Record<string, unknown>;
  const chatNames = u.prompt_tokens !== undefined || u.completion_tokens !== undefined;
  const promptTokens = count(chatNames ? u.prompt_tokens : u.input_tokens);
  const completionTokens = count(chatNames ? u.completion_tokens : u.output_tokens);
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

/**
 * A response whose usage block reports only input_tokens / output_tokens (OpenAI's image and realtime APIs)
 * also gets prompt_tokens / completion_tokens: the hub bills by the chat names, and without them the
 * request is billed as zero tokens. The original fields stay; anything else is returned as it came.
 */
export function withChatUsageNames(json: unknown): unknown {
  if (!json || typeof json !== 'object' || Array.isArray(json)) return json;
  const usage = (json as Record<string, unknown>).usage;
  if (!usage || typeof usage !== 'object' || Array.isArray(usage)) return json;
  const u = usage as Record<string, unknown>;
  if ('prompt_tokens' in u || !('input_tokens' in u)) return json;
  const named: Record<string, unknown> = { ...u, prompt_tokens: u.input_tokens };
  if ('output_tokens' in u) named.completion_tokens = u.output_tokens;
  return { ...(json as Record<string, unknown>), usage: named };
}
