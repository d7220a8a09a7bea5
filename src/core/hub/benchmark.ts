// The hub's `benchmark` message (DESIGN.md): run each prompt at temperature 0, one after another,
// each with its own timeout, and answer before the hub's timeout_ms with whatever finished plus
// an error for each prompt that did not. Pure handler: returns the reply payload, never throws.
import { z } from 'zod';
import type { EngineRequestOptions, NonStreamResult } from '../engine/types';
import { EngineHttpError } from '../engine/types';
import type { Logger } from '../log';
import type { ResolvedModel } from './verify';
import { formatIssues } from '../../shared/zod-issues';

export interface BenchmarkDeps {
  resolve(model: string): ResolvedModel | undefined;
  /** requestJson from src/core/engine/client.ts (or a scheduler-wrapped version of it). */
  complete(opts: EngineRequestOptions): Promise<NonStreamResult>;
  log?: Logger;
  /** Longest time one prompt may take (default: the hub's budget split evenly, at least 30 s). */
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
  /** The hub's timeout_ms was reached before every prompt ran. */
  | 'deadline'
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

/** Used when the hub sends no timeout_ms. */
export const DEFAULT_BENCHMARK_TIMEOUT_MS = 120_000;

const benchmarkPayload = z.object({
  benchmark_id: z.string().min(1).max(256),
  test_type: z.string().max(64).optional(),
  model_id: z.string().min(1).max(256),
  prompts: z
    .array(z.object({ id: z.string().min(1).max(256), prompt: z.string().min(1).max(100_000), expected_answer: z.string().max(10_000).optional() }))
    .max(500),
  timeout_ms: z.number().int().min(1).max(3_600_000).optional(),
});


/** Lower-case, compatibility-normalised, without any whitespace. */
export function normalizeAnswer(s: string): string {
  return s.normalize('NFKC').toLowerCase().replace(/\s+/gu, '');
}

/** The answer counts as correct when it contains the expected answer, ignoring case and spaces. */
export function isCorrect(answer: string, expected: string | undefined): boolean {
  if (expected === undefined || expected.trim() === '') return true;
  return normalizeAnswer(answer).includes(normalizeAnswer(expected));
}

export async function handleBenchmark(payload: unknown, deps: BenchmarkDeps, requestId = ''): Promise<BenchmarkResponse> {
  const now = deps.now ?? Date.now;
  const started = now();
  const parsed = benchmarkPayload.safeParse(payload);
  if (!parsed.success) {
    const id = payload && typeof payload === 'object' ? (payload as Record<string, unknown>).benchmark_id : undefined;
    const error = `invalid benchmark payload: ${formatIssues(parsed.error, { root: '(payload)' })}`;
    deps.log?.warn(`Refused a benchmark: ${error}`);
    return { request_id: requestId, benchmark_id: typeof id === 'string' ? id : '', results: [], total_latency_ms: 0, error, error_code: 'invalid_payload' };
  }
  const p = parsed.data;
  const budget = p.timeout_ms ?? DEFAULT_BENCHMARK_TIMEOUT_MS;
  // Answer a little before the hub gives up: the reply still has to travel.
  const deadline = started + budget - Math.min(1_000, Math.ceil(budget * 0.1));
  const perPrompt = deps.promptTimeoutMs ?? Math.max(30_000, Math.floor(budget / Math.max(1, p.prompts.length)));
  const resolved = deps.resolve(p.model_id);
  const results: BenchmarkResult[] = [];
  let error: { code: BenchmarkErrorCode; text: string } | undefined;

  if (!resolved) {
    error = { code: 'model_not_served', text: `model "${p.model_id}" is not served by this provider` };
    for (const pr of p.prompts) results.push(failed(pr.id, 0, error.code, error.text));
  } else {
    for (const pr of p.prompts) {
      const remaining = deadline - now();
      if (deps.signal?.aborted) {
        error ??= { code: 'stopped', text: 'the benchmark was stopped before it finished' };
        results.push(failed(pr.id, 0, 'stopped', 'not run: the benchmark was stopped'));
        continue;
      }
      if (remaining <= 0) {
        error ??= { code: 'deadline', text: `the hub's deadline of ${budget} ms was reached after ${results.length} of ${p.prompts.length} prompts` };
        results.push(failed(pr.id, 0, 'deadline', `not run: the hub's deadline of ${budget} ms was reached`));
        continue;
      }
      const limit = Math.min(perPrompt, remaining);
      const r = await runPrompt(p.model_id, pr, resolved, deps, limit, now);
      if (r.error && limit < perPrompt && now() >= deadline) {
        r.error = `stopped at the hub's deadline of ${budget} ms (${r.error})`;
        r.error_code = 'deadline';
        error ??= { code: 'deadline', text: `the hub's deadline of ${budget} ms was reached after ${results.length} of ${p.prompts.length} prompts` };
      }
      results.push(r);
    }
  }
  const reply: BenchmarkResponse = { request_id: requestId, benchmark_id: p.benchmark_id, results, total_latency_ms: Math.max(0, now() - started) };
  if (error) {
    reply.error = error.text;
    reply.error_code = error.code;
  }
  const right = results.filter((r) => r.correct).length;
  deps.log?.info(`Benchmark ${p.benchmark_id} (${p.test_type ?? 'unspecified'}) on ${p.model_id}: ${right}/${results.length} correct in ${reply.total_latency_ms} ms`);
  return reply;
}

function failed(promptId: string, latency: number, code: BenchmarkErrorCode, error: string): BenchmarkResult {
  return { prompt_id: promptId, answer: '', correct: false, latency_ms: latency, tokens_in: 0, tokens_out: 0, error, error_code: code };
}

async function runPrompt(
  model: string,
  pr: { id: string; prompt: string; expected_answer?: string },
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
      body: { model, messages: [{ role: 'user', content: pr.prompt }], temperature: 0, max_tokens: deps.maxTokens ?? 500, stream: false },
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

/** Content of choice 0 (chat message, or completions text); "" when absent. */
function readAnswer(json: unknown): string {
  const choices = (json as { choices?: unknown } | null)?.choices;
  const first = Array.isArray(choices) ? (choices[0] as Record<string, unknown> | undefined) : undefined;
  const message = first?.message as Record<string, unknown> | undefined;
  if (typeof message?.content === 'string') return message.content;
  if (typeof first?.text === 'string') return first.text;
  return '';
}
