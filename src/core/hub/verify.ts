// The hub's `verify` challenges (DESIGN.md): `fingerprint` hashes the model's files where the engine
// exposes their folder; `deterministic` runs a temperature-0 generation with the hub's seed.
// Pure handler: it takes the payload as received and returns the reply payload; it never throws.
import { createHash } from 'node:crypto';
import { createReadStream, promises as fs } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import type { EngineEndpoint, EngineRequestOptions, NonStreamResult } from '../engine/types';
import { EngineHttpError } from '../engine/types';
import type { Logger } from '../log';
import { formatIssues } from '../../shared/zod-issues';

export interface ResolvedModel {
  endpoint: EngineEndpoint;
  /** Folder holding the model's files, when the engine tells (e.g. vLLM's `root` in /v1/models). */
  modelDir?: string;
}

export interface VerifyDeps {
  resolve(model: string): ResolvedModel | undefined;
  /** requestJson from src/core/engine/client.ts (or a scheduler-wrapped version of it). */
  complete(opts: EngineRequestOptions): Promise<NonStreamResult>;
  log?: Logger;
  /** Longest wait for the deterministic generation (default 60 s). */
  timeoutMs?: number;
  /** Remembers file hashes by path, size and mtime so multi-GB weights are hashed once. */
  hashCache?: Map<string, string>;
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
  /** The engine does not say where the model's files are. */
  | 'no_model_dir'
  /** A file name points outside the model folder (refused, not hashed). */
  | 'path_outside_model'
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
      const reply = await fingerprint(c.data.files, resolved.modelDir, deps.hashCache);
      if (reply.error) return fail(reply.error.code, reply.error.text, reply.response);
      deps.log?.info(`Verify fingerprint ${p.challenge_id} for ${p.model_id}: ${reply.success ? 'all files match' : 'some files differ'}`);
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
      return fail('unsupported_challenge', `unsupported challenge type "${p.challenge_type}" (supported: fingerprint, deterministic)`);
  }
}

// ---- fingerprint ----

async function fingerprint(
  files: Array<{ filename: string; expected_hash: string }>,
  modelDir: string | undefined,
  cache: Map<string, string> | undefined,
): Promise<{ success: boolean; response: FingerprintResponse; error?: { code: VerifyErrorCode; text: string } }> {
  if (!modelDir) {
    return {
      success: false,
      response: { files: files.map((f) => ({ filename: f.filename, hash: '', status: 'missing' })) },
      error: { code: 'no_model_dir', text: "the engine does not say where this model's files are, so they cannot be fingerprinted" },
    };
  }
  const root = path.resolve(modelDir);
  const realRoot = await fs.realpath(root).catch(() => root);
  const allowed = linkRoot(realRoot);
  const refused: string[] = [];
  const out: FingerprintResponse['files'] = [];
  for (const f of files) {
    const lexical = insideDir(root, f.filename);
    // Symlinks are followed, then the real path must still be inside the model folder: a link to any
    // other file would make the provider a content oracle for the hub.
    const real = lexical ? await fs.realpath(lexical).catch(() => undefined) : undefined;
    const full = lexical && (real === undefined || insideDir(allowed, path.relative(allowed, real)) !== undefined) ? (real ?? lexical) : undefined;
    if (!full) {
      refused.push(f.filename);
      out.push({ filename: f.filename, hash: '', status: 'missing' });
      continue;
    }
    const hash = await sha256File(full, cache);
    if (hash === undefined) out.push({ filename: f.filename, hash: '', status: 'missing' });
    else out.push({ filename: f.filename, hash, status: hash === normalizeHash(f.expected_hash) ? 'pass' : 'fail' });
  }
  const success = refused.length === 0 && out.every((f) => f.status === 'pass');
  const error =
    refused.length > 0
      ? { code: 'path_outside_model' as const, text: `refused ${refused.length} file name(s) that point outside the model folder: ${refused.slice(0, 5).join(', ')}` }
      : undefined;
  return { success, response: { files: out }, ...(error ? { error } : {}) };
}

/**
 * Where the real files of a model folder may live. Normally the folder itself; for a Hugging Face cache
 * snapshot (`…/models--org--name/snapshots/<rev>`, whose files are links to `../../blobs/…`) the repo
 * folder `models--org--name`, which holds nothing but that model.
 */
function linkRoot(realRoot: string): string {
  const m = /^(.*[\\/]models--[^\\/]+)[\\/]snapshots[\\/][^\\/]+$/.exec(realRoot);
  return m ? (m[1] as string) : realRoot;
}

/** The absolute path of `name` under `root`, or undefined when it is absolute, empty or escapes root. */
export function insideDir(root: string, name: string): string | undefined {
  if (name.includes('\0') || path.isAbsolute(name) || path.win32.isAbsolute(name)) return undefined;
  const full = path.resolve(root, name.replace(/\\/g, '/'));
  const rel = path.relative(root, full);
  if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) return undefined;
  return full;
}

function normalizeHash(h: string): string {
  return h.trim().toLowerCase().replace(/^sha256:/, '');
}

/** sha256 of a regular file, or undefined when it does not exist or cannot be read. */
async function sha256File(file: string, cache?: Map<string, string>): Promise<string | undefined> {
  let st;
  try {
    st = await fs.stat(file);
  } catch {
    return undefined;
  }
  if (!st.isFile()) return undefined;
  const key = `${file}\0${st.size}\0${st.mtimeMs}`;
  const known = cache?.get(key);
  if (known) return known;
  try {
    const hash = createHash('sha256');
    for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 })) hash.update(chunk as Buffer);
    const hex = hash.digest('hex');
    if (cache) {
      if (cache.size >= 10_000) cache.clear();
      cache.set(key, hex);
    }
    return hex;
  } catch {
    return undefined;
  }
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
  const run = (body: Record<string, unknown>) => withTimeout(timeoutMs, (signal) => deps.complete({ endpoint, path: '/v1/chat/completions', body, signal, headersTimeoutMs: timeoutMs }));
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
          .object({ content: z.array(z.object({ token: z.string() })).nullable().optional() })
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
