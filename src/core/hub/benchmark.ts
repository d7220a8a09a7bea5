// The hub's `benchmark` message, run as the Go provider runs it (inference_client.go handleBenchmark): every
// prompt, one after another, as a chat at temperature 0 with max_tokens 500, each with its own timeout of
// max(30 s, timeout_ms / number of prompts) (so timeout_ms 0 or absent is 30 s a prompt); an answer is
// correct when, lowercased, it contains the expected answer, lowercased (no expected answer: correct). A bad
// prompt (not text, or one the engine refuses) fails that prompt, never the whole benchmark; total_latency_ms
// is the sum of the prompts' latencies. Pure handler: returns the reply payload, never throws.
import { z } from 'zod';
import type { EngineRequestOptions, NonStreamResult } from '../engine-client/types';
import { EngineHttpError } from '../engine-client/types';
import type { Logger } from '../base/log';
import type { ResolvedModel } from './verify';
import { formatIssues } from '../../shared/zod-issues';

export interface BenchmarkDeps {
  resolve(model: string): ResolvedModel | undefined;
  /** requestJson from src/core/engine-client/client.ts (or a scheduler-wrapped version of it). */
  complete(opts: EngineRequestOptions): Promise<NonStreamResult>;
  log?: Logger;
  /** Longest time one prompt may take (default: max(30 s, timeout_ms / number of prompts), as Go). */
  promptTimeoutMs?: number;
  /** Max tokens of each answer (default 500, as the Go provider). */
  maxTokens?: number;
  /** Aborts the whole benchmark (link closed, agent stopping). */
  signal?: AbortSignal;
  now?: () => number;
}

/**
 * Why a benchmark (or one of its prompts) did not finish, sent as `error_code` beside `error`; the hub's
 * Go structs ignore fields they do not know (docs/hub-dialect.md).
 */
export type BenchmarkErrorCode =
  /** The payload is not a benchmark (reply level only). */
  | 'invalid_payload'
  /** The model is not served (or not healthy) here. */
  | 'model_not_served'
  /** The benchmark was stopped (link closed, agent stopping). */
  | 'stopped'
  /** The prompt entry is not {id, prompt: text}, or beyond the most prompts one benchmark runs. */
  | 'invalid_prompt'
  /** One prompt took longer than its own timeout. */
  | 'prompt_timeout'
  /** The engine answered the prompt with an HTTP error. */
  | 'engine_error'
  /** Anything else (the engine could not be reached, its answer was unreadable). */
  | 'failed';

export interface BenchmarkResult {
  prompt_id: string;
  answer: string;
  correct: boolean;
  latency_ms: number;
  tokens_in: number;
  tokens_out: number;
  error?: string;
  error_code?: BenchmarkErrorCode;
}

export interface BenchmarkResponse {
  request_id: string;
  benchmark_id: string;
  results: BenchmarkResult[];
  total_latency_ms: number;
  error?: string;
  error_code?: BenchmarkErrorCode;
}

/** Each prompt's shortest timeout (Go: a prompt never gets less than 30 s). */
export const MIN_PROMPT_TIMEOUT_MS = 30_000;
/** Go's max_tokens of a benchmark answer. */
export const BENCHMARK_MAX_TOKENS = 500;
/** Prompts one benchmark runs at most; any beyond fail alone. */
export const MAX_PROMPTS = 500;

const benchmarkPayload = z.object({
  benchmark_id: z.string().min(1).max(256),
  test_type: z.string().max(64).nullish(),
  model_id: z.string().min(1).max(256),
  // Go reads a null or missing list as no prompts; each entry is checked on its own below.
  prompts: z.array(z.unknown()).max(10_000).nullish(),
  timeout_ms: z.number().finite().nullish(),
});

const promptEntry = z.object({
  id: z.string().max(256),
  prompt: z.string(),
  expected_answer: z.string().nullish(),
});

/** Go's grading: the answer, lowercased, contains the expected answer, lowercased; nothing expected is correct. */
export function isCorrect(answer: string, expected: string | null | undefined): boolean {
  if (!expected) return true;
  return answer.toLowerCase().includes(expected.toLowerCase());
}

export async function handleBenchmark(payload: unknown, deps: BenchmarkDeps, requestId = ''): Promise<BenchmarkResponse> {
  const now = deps.now ?? Date.now;
  const parsed = benchmarkPayload.safeParse(payload);
  if (!parsed.success) {
    const id = payload && typeof payload === 'object' ? (payload as Record<string, unknown>).benchmark_id : undefined;
    const error = `invalid benchmark payload: ${formatIssues(parsed.error, { root: '(payload)' })}`;
    deps.log?.warn(`Refused a benchmark: ${error}`);
    return { request_id: requestId, benchmark_id: typeof id === 'string' ? id : '', results: [], total_latency_ms: 0, error, error_code: 'invalid_payload' };
  }
  const p = parsed.data;
  const prompts = p.prompts ?? [];
  const perPrompt = deps.promptTimeoutMs ?? Math.max(MIN_PROMPT_TIMEOUT_MS, Math.floor((p.timeout_ms ?? 0) / Math.max(1, prompts.length)));
  const resolved = deps.resolve(p.model_id);
  const results: BenchmarkResult[] = [];
  let error: { code: BenchmarkErrorCode; text: string } | undefined;

  for (const [i, raw] of prompts.entries()) {
    const entry = promptEntry.safeParse(raw);
    const rawId = raw && typeof raw === 'object' ? (raw as Record<string, unknown>).id : undefined;
    const id = entry.success ? entry.data.id : typeof rawId === 'string' ? rawId.slice(0, 256) : `#${i}`;
    if (!resolved) {
      error ??= { code: 'model_not_served', text: `model "${p.model_id}" is not served by this provider` };
      results.push(failed(id, 0, error.code, error.text));
    } else if (!entry.success) {
      results.push(failed(id, 0, 'invalid_prompt', `not run: ${formatIssues(entry.error, { root: '(prompt)' })}`));
    } else if (i >= MAX_PROMPTS) {
      results.push(failed(id, 0, 'invalid_prompt', `not run: a benchmark runs at most ${MAX_PROMPTS} prompts`));
    } else if (deps.signal?.aborted) {
      error ??= { code: 'stopped', text: 'the benchmark was stopped before it finished' };
      results.push(failed(id, 0, 'stopped', 'not run: the benchmark was stopped'));
    } else {
      results.push(await runPrompt(p.model_id, entry.data, resolved, deps, perPrompt, now));
    }
  }
  const total = results.reduce((sum, r) => sum + r.latency_ms, 0);
  const reply: BenchmarkResponse = { request_id: requestId, benchmark_id: p.benchmark_id, results, total_latency_ms: total };
  if (error) {
    reply.error = error.text;
    reply.error_code = error.code;
  }
  const right = results.filter((r) => r.correct).length;
  deps.log?.info(`Benchmark ${p.benchmark_id} (${p.test_type ?? 'unspecified'}) on ${p.model_id}: ${right}/${results.length} correct in ${total} ms`);
  return reply;
}

function failed(promptId: string, latency: number, code: BenchmarkErrorCode, error: string): BenchmarkResult {
  return { prompt_id: promptId, answer: '', correct: false, latency_ms: latency, tokens_in: 0, tokens_out: 0, error, error_code: code };
}

async function runPrompt(
  model: string,
  pr: { id: string; prompt: string; expected_answer?: string | null | undefined },
  resolved: ResolvedModel,
  deps: BenchmarkDeps,
  timeoutMs: number,
  now: () => number,
): Promise<BenchmarkResult> {
  const t0 = now();
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), timeoutMs);
  const onOuterAbort = (): void => ac.abort();
  deps.signal?.addEventListener('abort', onOuterAbort, { once: true });
  try {
    const res = await deps.complete({
      endpoint: resolved.endpoint,
      path: '/v1/chat/completions',
      body: { model, messages: [{ role: 'user', content: pr.prompt }], temperature: 0, max_tokens: deps.maxTokens ?? BENCHMARK_MAX_TOKENS, stream: false },
      signal: ac.signal,
      headersTimeoutMs: timeoutMs,
    });
    const answer = readAnswer(res.json);
    return {
      prompt_id: pr.id,
      answer,
      correct: isCorrect(answer, pr.expected_answer),
      latency_ms: now() - t0,
      tokens_in: res.usage?.promptTokens ?? 0,
      tokens_out: res.usage?.completionTokens ?? 0,
    };
  } catch (e) {
    const latency = now() - t0;
    let msg: string;
    let code: BenchmarkErrorCode;
    if (deps.signal?.aborted) [code, msg] = ['stopped', 'the benchmark was stopped'];
    else if (ac.signal.aborted) [code, msg] = ['prompt_timeout', `timed out after ${timeoutMs} ms`];
    else if (e instanceof EngineHttpError) [code, msg] = ['engine_error', `${e.message} (status ${e.statusCode})`];
    else [code, msg] = ['failed', e instanceof Error ? e.message : String(e)];
    deps.log?.debug(`Benchmark prompt ${pr.id} failed: ${msg}`, { code });
    return failed(pr.id, latency, code, msg);
  } finally {
    clearTimeout(timer);
    deps.signal?.removeEventListener('abort', onOuterAbort);
  }
}

/** The content of choice 0's message, as Go reads it; "" when absent. */
function readAnswer(json: unknown): string {
  const choices = (json as { choices?: unknown } | null)?.choices;
  const first = Array.isArray(choices) ? (choices[0] as Record<string, unknown> | undefined) : undefined;
  const message = first?.message as Record<string, unknown> | undefined;
  return typeof message?.content === 'string' ? message.content : '';
}
