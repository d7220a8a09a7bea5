// The hub's `verify` challenges (capability "verification", handleVerification in Go's inference_client.go):
// `fingerprint` is answered from the model's weight manifest (src/core/weights: a Go node's manifest, or the
// files the engine serves from, hashed here once), never by reading a path the hub names; `deterministic`
// runs a temperature-0 generation with the hub's seed.
// Pure handler: it takes the payload as received and returns the reply payload; it never throws.
import { z } from 'zod';
import type { ModelWeightsView } from '../../shared/types';
import type { EngineEndpoint, EngineRequestOptions, NonStreamResult } from '../engine-client/types';
import { EngineHttpError } from '../engine-client/types';
import type { Logger } from '../base/log';
import { normalizeHash } from '../weights/manifest';
import type { FileLookup } from '../weights/weights';
import { formatIssues } from '../../shared/zod-issues';

export interface ResolvedModel {
  endpoint: EngineEndpoint;
}

/** What verify reads of the weights service (src/core/weights/weights.ts). */
export interface WeightsLookup {
  lookup(model: string, filename: string): FileLookup;
  /** Resolves once none of the files is still being hashed, or after timeoutMs. */
  settled(model: string, filenames: string[], timeoutMs: number): Promise<void>;
  status(model: string): ModelWeightsView | undefined;
}

export interface VerifyDeps {
  resolve(model: string): ResolvedModel | undefined;
  /** requestJson from src/core/engine-client/client.ts (or a scheduler-wrapped version of it). */
  complete(opts: EngineRequestOptions): Promise<NonStreamResult>;
  /** The weight manifests; without it every fingerprint file is unknown (no_model_dir). */
  weights?: WeightsLookup;
  log?: Logger;
  /** Longest wait for the deterministic generation (default 60 s). */
  timeoutMs?: number;
  /** Longest wait for a challenged file still being hashed (default 120 s). */
  weightsWaitMs?: number;
}

export type FingerprintStatus = 'pass' | 'fail' | 'missing';
export interface FingerprintResponse {
  files: Array<{ filename: string; hash: string; status: FingerprintStatus }>;
}
export interface DeterministicResponse {
  tokens: string[];
  text: string;
}

/**
 * Why a verify challenge failed, sent as `error_code` beside `error` (the hub's Go structs ignore fields
 * they do not know, so the extra field is harmless; docs/hub-dialect.md).
 */
export type VerifyErrorCode =
  /** The payload is not {challenge_id, challenge_type, model_id, challenge}. */
  | 'invalid_payload'
  /** The model is not served (or not healthy) here. */
  | 'model_not_served'
  /** The challenge body does not fit its type. */
  | 'invalid_challenge'
  /** A challenge type other than fingerprint or deterministic. */
  | 'unsupported_challenge'
  /** The node cannot tell where the model's files are (the engine does not say, or they are not on this machine). */
  | 'no_model_dir'
  /** A challenged file is still being hashed (the first time the node reads a model): asked again later, it passes or fails. */
  | 'weights_pending'
  /** The model's files could not be read. */
  | 'weights_unreadable'
  /** The deterministic generation failed at the engine. */
  | 'generation_failed';

export interface VerifyReply {
  challenge_id: string;
  success: boolean;
  response: FingerprintResponse | DeterministicResponse | null;
  error?: string;
  error_code?: VerifyErrorCode;
}

const verifyPayload = z.object({
  challenge_id: z.string().min(1).max(256),
  challenge_type: z.string().min(1).max(64),
  model_id: z.string().min(1).max(256),
  challenge: z.unknown(),
});

const fingerprintChallenge = z.object({
  files: z
    .array(z.object({ filename: z.string().min(1).max(1024), expected_hash: z.string().max(200) }))
    .min(1)
    .max(1000),
});

const deterministicChallenge = z.object({
  prompt: z.string().min(1).max(100_000),
  seed: z.number().int(),
  max_tokens: z.number().int().min(1).max(8192),
});

export async function handleVerify(payload: unknown, deps: VerifyDeps): Promise<VerifyReply> {
  const parsed = verifyPayload.safeParse(payload);
  if (!parsed.success) {
    const id = payload && typeof payload === 'object' ? (payload as Record<string, unknown>).challenge_id : undefined;
    const error = `invalid verify payload: ${formatIssues(parsed.error, { root: '(payload)' })}`;
    deps.log?.warn(`Refused a verify challenge: ${error}`);
    return { challenge_id: typeof id === 'string' ? id : '', success: false, response: null, error, error_code: 'invalid_payload' };
  }
  const p = parsed.data;
  const fail = (code: VerifyErrorCode, error: string, response: VerifyReply['response'] = null): VerifyReply => {
    deps.log?.warn(`Verify ${p.challenge_type} ${p.challenge_id} for ${p.model_id} failed: ${error}`, { code });
    return { challenge_id: p.challenge_id, success: false, response, error, error_code: code };
  };
  const resolved = deps.resolve(p.model_id);
  if (!resolved) return fail('model_not_served', `model "${p.model_id}" is not served by this provider`);

  switch (p.challenge_type) {
    case 'fingerprint': {
      const c = fingerprintChallenge.safeParse(p.challenge);
      if (!c.success) return fail('invalid_challenge', `invalid fingerprint challenge: ${formatIssues(c.error, { root: '(payload)' })}`);
      const reply = await fingerprint(p.model_id, c.data.files, deps);
      if (reply.error) return fail(reply.error.code, reply.error.text, reply.response);
      const passed = reply.response?.files.filter((f) => f.status === 'pass').length ?? 0;
      deps.log?.info(
        `Verify fingerprint ${p.challenge_id} for ${p.model_id}: ${reply.success ? 'all files match' : `${passed} of ${c.data.files.length} file(s) match`}`,
      );
      return { challenge_id: p.challenge_id, success: reply.success, response: reply.response };
    }
    case 'deterministic': {
      const c = deterministicChallenge.safeParse(p.challenge);
      if (!c.success) return fail('invalid_challenge', `invalid deterministic challenge: ${formatIssues(c.error, { root: '(payload)' })}`);
      try {
        const response = await deterministic(p.model_id, c.data, resolved.endpoint, deps);
        deps.log?.info(`Verify deterministic ${p.challenge_id} for ${p.model_id}: ${response.tokens.length} tokens`);
        return { challenge_id: p.challenge_id, success: true, response };
      } catch (e) {
        return fail('generation_failed', `generation failed: ${describe(e)}`);
      }
    }
    default:
      // Go's words (handleVerification): "unsupported challenge type: X", on a verify reply with success false.
      return fail('unsupported_challenge', `unsupported challenge type: ${p.challenge_type}`);
  }
}

// ---- fingerprint ----

/**
 * Each challenged file from the manifest: `pass` with the matching hash, `fail` with the real one,
 * `missing` (hash "") only for a file the model's manifest does not have. A file still being hashed is
 * waited for (its model first in line); when the node cannot say, the reply says why instead of guessing.
 */
async function fingerprint(
  model: string,
  files: Array<{ filename: string; expected_hash: string }>,
  deps: VerifyDeps,
): Promise<{ success: boolean; response: FingerprintResponse | null; error?: { code: VerifyErrorCode; text: string } }> {
  const allMissing: FingerprintResponse = { files: files.map((f) => ({ filename: f.filename, hash: '', status: 'missing' })) };
  const w = deps.weights;
  if (!w)
    return {
      success: false,
      response: allMissing,
      error: { code: 'no_model_dir', text: "this node keeps no weight manifests, so the model's files cannot be fingerprinted" },
    };
  await w.settled(
    model,
    files.map((f) => f.filename),
    deps.weightsWaitMs ?? 120_000,
  );
  const st = w.status(model);
  if (!st || st.state === 'unlocated') {
    const why = st?.reason ?? 'the engine does not say where they are';
    return { success: false, response: allMissing, error: { code: 'no_model_dir', text: `the model's files cannot be fingerprinted: ${why}` } };
  }
  const out: FingerprintResponse['files'] = [];
  for (const f of files) {
    const known = w.lookup(model, f.filename);
    if (known.state === 'pending') {
      const progress = `${(st.doneBytes / 1e9).toFixed(1)} of ${(st.totalBytes / 1e9).toFixed(1)} GB`;
      return {
        success: false,
        response: null,
        error: { code: 'weights_pending', text: `the model's files are still being hashed for the first time (${progress}); ask again when that is done` },
      };
    }
    if (known.state === 'absent') out.push({ filename: f.filename, hash: '', status: 'missing' });
    else out.push({ filename: f.filename, hash: known.hash, status: known.hash === normalizeHash(f.expected_hash) ? 'pass' : 'fail' });
  }
  if (st.state === 'failed' && out.some((f) => f.status === 'missing')) {
    return {
      success: false,
      response: { files: out },
      error: { code: 'weights_unreadable', text: `the model's files could not be read: ${st.reason ?? 'unknown error'}` },
    };
  }
  return { success: out.every((f) => f.status === 'pass'), response: { files: out } };
}

// ---- deterministic ----

async function deterministic(
  model: string,
  c: z.infer<typeof deterministicChallenge>,
  endpoint: EngineEndpoint,
  deps: VerifyDeps,
): Promise<DeterministicResponse> {
  const base = {
    model,
    messages: [{ role: 'user', content: c.prompt }],
    temperature: 0,
    seed: c.seed,
    max_tokens: c.max_tokens,
    stream: false,
  };
  const timeoutMs = deps.timeoutMs ?? 60_000;
  const run = (body: Record<string, unknown>) =>
    withTimeout(timeoutMs, (signal) => deps.complete({ endpoint, path: '/v1/chat/completions', body, signal, headersTimeoutMs: timeoutMs }));
  let result: NonStreamResult;
  try {
    // Logprobs give exact token boundaries; engines that refuse them get a second, plain request.
    result = await run({ ...base, logprobs: true, top_logprobs: 1 });
  } catch (e) {
    if (!(e instanceof EngineHttpError) || (e.statusCode !== 400 && e.statusCode !== 422)) throw e;
    deps.log?.debug(`Engine refused logprobs (${e.message}); retrying without them`);
    result = await run(base);
  }
  return readDeterministic(result.json);
}

const chatAnswer = z.object({
  choices: z
    .array(
      z.object({
        message: z.object({ content: z.string().nullable().optional() }).optional(),
        text: z.string().optional(),
        logprobs: z
          .object({
            content: z
              .array(z.object({ token: z.string() }))
              .nullable()
              .optional(),
          })
          .nullable()
          .optional(),
      }),
    )
    .min(1),
});

function readDeterministic(json: unknown): DeterministicResponse {
  const r = chatAnswer.safeParse(json);
  if (!r.success) throw new Error(`the engine's answer has no choices (${formatIssues(r.error, { root: '(payload)' })})`);
  const choice = r.data.choices[0]!;
  const text = choice.message?.content ?? choice.text ?? '';
  const lp = choice.logprobs?.content;
  const tokens = lp && lp.length > 0 ? lp.map((t) => t.token) : text.split(/\s+/).filter(Boolean);
  return { tokens, text };
}

/** Runs `fn` with a signal that aborts after `ms`; a timeout rejects with a plain message. */
async function withTimeout<T>(ms: number, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), ms);
  try {
    return await fn(ac.signal);
  } catch (e) {
    if (ac.signal.aborted) throw new Error(`the engine did not answer within ${Math.round(ms / 100) / 10} s`);
    throw e;
  } finally {
    clearTimeout(timer);
  }
}

function describe(e: unknown): string {
  if (e instanceof EngineHttpError) return `${e.message} (status ${e.statusCode})`;
  return e instanceof Error ? e.message : String(e);
}
