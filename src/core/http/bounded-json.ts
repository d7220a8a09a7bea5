// The one reader of JSON from outside the process: hub frames, engine bodies and SSE events, platform
// answers, bridge calls, gateway requests. JSON.parse itself copes with any nesting, but what comes after
// it does not: JSON.stringify, zod, a sanitiser or a structured clone recurse, and a value nested a few
// thousand deep overflows the stack in whichever of them meets it first — far from where it came in, often
// outside any try (a 10 KB hub notice nested 5,000 deep once stopped the agent). So the text is measured
// before it is parsed — size, nesting depth, number of object keys — in one linear pass that never
// recurses, and refused with a stable code past a limit. Nothing deeper than the limit exists in the
// process after a read, so every later walk is safe.
import { CodedError } from '../../shared/bridge-error';

export interface JsonLimits {
  /** Largest text, in UTF-8 bytes. */
  maxBytes: number;
  /** Deepest nesting of arrays and objects (a bare value is depth 0, `[]` is 1). */
  maxDepth: number;
  /** Most object keys in the whole document. */
  maxKeys: number;
}

/** Why a text was refused: too large, nested too deep, too many keys, or not JSON at all. */
export type JsonRefusalCode = 'too_large' | 'too_deep' | 'too_many_keys' | 'not_json';

export class BoundedJsonError extends CodedError<JsonRefusalCode> {
  override name = 'BoundedJsonError';
}

/**
 * No real input of ours nests deeper than a few dozen levels (an OpenAI body with a tool's JSON schema,
 * an engine answer with logprobs); the stack overflows somewhere past a few thousand.
 */
export const MAX_JSON_DEPTH = 100;

/** The limits of each boundary; sizes match what each already caps on the wire. */
export const JSON_LIMITS = {
  /** A hub frame (the link's 1 MB message limit). */
  hub: { maxBytes: 1024 * 1024, maxDepth: MAX_JSON_DEPTH, maxKeys: 100_000 },
  /** An engine's non-streaming answer (logprobs can be large) or one SSE event. */
  engine: { maxBytes: 32 * 1024 * 1024, maxDepth: MAX_JSON_DEPTH, maxKeys: 2_000_000 },
  /** The platform's HTTP API answers (catalogue, rates, stats, provider status). */
  platform: { maxBytes: 8 * 1024 * 1024, maxDepth: MAX_JSON_DEPTH, maxKeys: 500_000 },
  /** One console bridge call (the console socket's 1 MB frame). */
  bridge: { maxBytes: 1024 * 1024, maxDepth: 32, maxKeys: 10_000 },
  /** A gateway request body or WebSocket message (the gateway's 1 MiB default). */
  gateway: { maxBytes: 1024 * 1024, maxDepth: MAX_JSON_DEPTH, maxKeys: 100_000 },
} as const satisfies Record<string, JsonLimits>;

const QUOTE = 34;
const BACKSLASH = 92;
const OPEN_OBJECT = 123;
const OPEN_ARRAY = 91;
const CLOSE_OBJECT = 125;
const CLOSE_ARRAY = 93;
const COLON = 58;

function byteLength(text: string, max: number): number {
  // Each UTF-16 unit is 1 to 3 UTF-8 bytes: most texts are decided without counting.
  if (text.length > max) return text.length;
  if (text.length * 3 <= max) return text.length;
  return Buffer.byteLength(text, 'utf8');
}

/**
 * Measures `text` against `limits` without parsing it; throws BoundedJsonError past one. Strings are
 * skipped with indexOf (brackets and colons inside them do not count). Malformed text is left to
 * JSON.parse to describe.
 */
export function checkJsonText(text: string, limits: JsonLimits): void {
  const bytes = byteLength(text, limits.maxBytes);
  if (bytes > limits.maxBytes)
    throw new BoundedJsonError('too_large', `the JSON is ${bytes > text.length ? bytes : `at least ${bytes}`} bytes, over the ${limits.maxBytes}-byte limit`);
  // Too short to break either limit: nothing to count.
  if (text.length <= limits.maxDepth && text.length <= limits.maxKeys) return;
  const n = text.length;
  let depth = 0;
  let keys = 0;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      // To the closing quote: one not preceded by an odd run of backslashes.
      let j = i + 1;
      for (;;) {
        j = text.indexOf('"', j);
        if (j < 0) return; // unterminated: JSON.parse says so
        let k = j - 1;
        while (text.charCodeAt(k) === BACKSLASH) k--;
        if ((j - 1 - k) % 2 === 0) break;
        j++;
      }
      i = j;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (++depth > limits.maxDepth) throw new BoundedJsonError('too_deep', `the JSON nests deeper than ${limits.maxDepth} levels`);
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth--;
    } else if (c === COLON) {
      if (++keys > limits.maxKeys) throw new BoundedJsonError('too_many_keys', `the JSON has more than ${limits.maxKeys} keys`);
    }
  }
}

/** Parses `text` (a string or UTF-8 bytes) within `limits`; throws BoundedJsonError (`not_json` for malformed text). */
export function parseJson(text: string | Buffer, limits: JsonLimits): unknown {
  if (typeof text !== 'string') {
    if (text.length > limits.maxBytes) throw new BoundedJsonError('too_large', `the JSON is ${text.length} bytes, over the ${limits.maxBytes}-byte limit`);
    text = text.toString('utf8');
  }
  checkJsonText(text, limits);
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new BoundedJsonError('not_json', `not valid JSON (${(e as Error).message})`);
  }
}

export type JsonRead = { ok: true; value: unknown } | { ok: false; code: JsonRefusalCode; message: string };

/** parseJson as a result, for callers that answer a refusal rather than throw. */
export function readJson(text: string | Buffer, limits: JsonLimits): JsonRead {
  try {
    return { ok: true, value: parseJson(text, limits) };
  } catch (e) {
    if (e instanceof BoundedJsonError) return { ok: false, code: e.code, message: e.message };
    throw e;
  }
}
