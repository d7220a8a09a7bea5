// Seeded generator of hub -> provider frames for the fuzz scenario: valid messages of every type the
// agent serves, mutations of them that the protocol (HUB-PROTOCOL.md, seed 000) makes invalid, and random
// frames. Inference answers and refusals go on their result path (stream_end / ack with a status), never
// as `error` frames; unknown types are not answered. Each frame carries what the agent must do with it, worked out here from how it was built,
// not by asking the agent's own parser.
import { MAX_JSON_DEPTH } from '../../../src/core/http/bounded-json';
import type { Rng } from './faults';

/** What the agent must answer. */
export type Expect =
  /** Nothing (cancel of an unknown request, ack/error from the hub, frames without a request id). */
  | { kind: 'none'; invalid: boolean }
  /** An `error` with code 400 and this request id. */
  | { kind: 'bad'; id: string }
  /**
   * One reply of one of these types with this request id; an `error` must have one of `codes`; with
   * `failed`, the reply must report a failure (status_code in it, or an `error` text matching it).
   */
  | { kind: 'reply'; id: string; types: string[]; codes?: number[]; failed?: { statusCodes?: number[]; error: RegExp }; invalid?: boolean };

export interface Frame {
  text: string;
  expect: Expect;
  label: string;
}

const NOT_SERVED = 'fuzz/not-served';
const KNOWN = new Set(['ack', 'error', 'inference', 'warmup', 'verify', 'benchmark', 'cancel', 'resume']);

type Obj = Record<string, unknown>;

function deep(depth: number, leaf: string): string {
  return '['.repeat(depth) + leaf + ']'.repeat(depth);
}

/**
 * Deeply nested values are spliced into the frame text, never built as objects here (JSON.stringify
 * of ~10,000 levels overflows the stack of the test process itself).
 */
const DEEP = new Map<string, string>();
function deepValue(depth: number, leaf: string): string {
  const marker = `@@deep-${DEEP.size}@@`;
  DEEP.set(marker, deep(depth, leaf));
  return marker;
}
function render(msg: unknown): string {
  let text = JSON.stringify(msg);
  for (const [marker, value] of DEEP) text = text.replace(`"${marker}"`, value);
  DEEP.clear();
  return text;
}

function randomString(r: Rng, max = 24): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789 _-/"\\\u00e9\u4e2d\ud83d\ude00\n\t';
  let s = '';
  const n = r.int(0, max);
  for (let i = 0; i < n; i++) s += alphabet[r.int(0, alphabet.length - 1)];
  return s;
}

function randomJson(r: Rng, depth = 0): unknown {
  const k = r.int(0, depth > 3 ? 4 : 6);
  switch (k) {
    case 0:
      return null;
    case 1:
      return r.chance(0.5);
    case 2:
      return r.chance(0.5) ? r.int(-1e9, 1e9) : r() * 1e6;
    case 3:
    case 4:
      return randomString(r);
    case 5:
      return Array.from({ length: r.int(0, 4) }, () => randomJson(r, depth + 1));
    default: {
      const o: Obj = {};
      for (let i = r.int(0, 4); i > 0; i--) o[r.pick(['type', 'payload', 'request_id', 'model_id', randomString(r, 8)])] = randomJson(r, depth + 1);
      return o;
    }
  }
}

/** Valid messages; `model` is the served model (used by a few real inference requests). */
function valid(r: Rng, id: string, model: string): { msg: Obj; expect: Expect; label: string } {
  const kind = r.pick(['inference', 'inference', 'warmup', 'cancel', 'resume', 'verify', 'benchmark', 'hub-ack', 'hub-error', 'real'] as const);
  const request = { model: NOT_SERVED, messages: [{ role: 'user', content: 'hello' }], max_tokens: 1 };
  switch (kind) {
    case 'inference': {
      const stream = r.chance(0.5);
      return {
        label: 'inference',
        msg: { type: 'inference', request_id: id, payload: { endpoint_id: 'ep', model_id: NOT_SERVED, stream, request } },
        expect: { kind: 'reply', id, types: [stream ? 'stream_end' : 'ack'], failed: { statusCodes: [404], error: /./ } },
      };
    }
    case 'real': {
      const stream = r.chance(0.5);
      return {
        label: 'real-inference',
        msg: { type: 'inference', request_id: id, payload: { model_id: model, stream, request: { ...request, model } } },
        // Served, or refused at capacity on the same result path.
        expect: { kind: 'reply', id, types: [stream ? 'stream_end' : 'ack'] },
      };
    }
    case 'warmup':
      return {
        label: 'warmup',
        msg: { type: 'warmup', request_id: id, payload: { model_id: NOT_SERVED, warmup_type: 'inference' } },
        expect: { kind: 'reply', id, types: ['ack'] },
      };
    case 'cancel':
      return { label: 'cancel', msg: { type: 'cancel', request_id: id, payload: { request_id: id } }, expect: { kind: 'none', invalid: false } };
    case 'resume':
      return {
        label: 'resume',
        msg: { type: 'resume', payload: { request_id: id, last_seq: r.int(0, 50) } },
        expect: { kind: 'reply', id, types: ['error'], codes: [410] },
      };
    case 'verify':
      return {
        label: 'verify',
        msg: {
          type: 'verify',
          request_id: id,
          payload: {
            challenge_id: id,
            challenge_type: 'fingerprint',
            model_id: NOT_SERVED,
            challenge: { files: [{ filename: 'a.bin', expected_hash: 'ab' }] },
          },
        },
        expect: { kind: 'reply', id, types: ['verify'] },
      };
    case 'benchmark':
      return {
        label: 'benchmark',
        msg: {
          type: 'benchmark',
          request_id: id,
          payload: {
            benchmark_id: id,
            test_type: 'accuracy',
            model_id: NOT_SERVED,
            prompts: [{ id: 'p1', prompt: '2+2?', expected_answer: '4' }],
            timeout_ms: 1000,
          },
        },
        expect: { kind: 'reply', id, types: ['benchmark_response'] },
      };
    case 'hub-ack':
      return {
        label: 'hub-ack',
        msg: { type: 'ack', request_id: id, payload: { request_id: id, success: r.chance(0.5), message: randomString(r) } },
        expect: { kind: 'none', invalid: false },
      };
    default:
      // Any code but 401/403, which legitimately mean "your key was refused" and close the link.
      return {
        label: 'hub-error',
        msg: { type: 'error', request_id: id, payload: { request_id: id, code: r.pick([400, 404, 429, 500, 'E_X']), message: randomString(r) } },
        expect: { kind: 'none', invalid: false },
      };
  }
}

/** Payload mutations that break the message type's schema; the envelope (and so the id) stays valid. */
function invalidPayload(r: Rng, id: string, huge: boolean): { msg: Obj; label: string; verifyLike?: string; unknown?: boolean } {
  const big = 'x'.repeat(huge ? r.int(64_000, 300_000) : 300);
  const request = { model: NOT_SERVED, messages: [{ role: 'user', content: 'hi' }] };
  const pick = r.int(0, 21);
  const inf = (payload: unknown, label: string) => ({ msg: { type: 'inference', request_id: id, payload }, label: `inference:${label}` });
  switch (pick) {
    case 0:
      return inf({ request }, 'no model_id');
    case 1:
      return inf({ model_id: 123, request }, 'model_id number');
    case 2:
      return inf({ model_id: big, request }, 'model_id huge');
    case 3:
      return inf({ model_id: NOT_SERVED }, 'no request');
    case 4:
      return inf({ model_id: NOT_SERVED, request: 'say hi' }, 'request string');
    case 5:
      return inf({ model_id: NOT_SERVED, request: { max_tokens: 3 } }, 'request without messages or prompt');
    case 6:
      return inf({ model_id: NOT_SERVED, stream: 'yes', request }, 'stream string');
    case 7:
      return inf(r.pick(['str', 42, [], true]), 'payload not an object');
    case 8:
      return inf({ model_id: deepValue(r.int(100, 20_000), '1'), request }, 'model_id deeply nested');
    case 9:
      return inf({ model_id: '', request }, 'model_id empty');
    case 10:
      return { msg: { type: 'warmup', request_id: id, payload: {} }, label: 'warmup:no model_id' };
    case 11:
      return { msg: { type: 'warmup', request_id: id, payload: { model_id: { a: 1 } } }, label: 'warmup:model_id object' };
    case 12:
      return {
        msg: { type: 'warmup', request_id: id, payload: { model_id: NOT_SERVED, warmup_type: big.slice(0, 100) } },
        label: 'warmup:warmup_type too long',
      };
    case 13:
      return { msg: { type: 'resume', request_id: id, payload: { request_id: id, last_seq: r.pick([-1, 1.5, '3', null]) } }, label: 'resume:bad last_seq' };
    case 14:
      return { msg: { type: 'resume', request_id: id, payload: { request_id: id } }, label: 'resume:no last_seq' };
    case 15:
      return { msg: { type: 'resume', request_id: id, payload: { request_id: 7, last_seq: 0 } }, label: 'resume:request_id number' };
    case 16:
      return { msg: { type: 'cancel', request_id: id, payload: { request_id: 5 } }, label: 'cancel:request_id number' };
    case 17: {
      const t = r.pick(['teleport', 'Inference', 'INFERENCE', 'stream_chunk', 'register', 'heartbeat', randomString(r, 12)]);
      return { msg: { type: t === '' || KNOWN.has(t) ? 'x-unknown' : t, request_id: id, payload: randomJson(r) }, label: 'unknown type', unknown: true };
    }
    case 18:
      return { msg: { type: 'error', request_id: id, payload: { request_id: id, code: { nested: true } } }, label: 'error:code object' };
    case 19:
      return { msg: { type: 'ack', request_id: id, payload: { request_id: id, success: 'yes' } }, label: 'ack:success string' };
    case 20:
      return {
        msg: {
          type: 'verify',
          request_id: id,
          payload: r.pick([{}, { challenge_id: 5 }, 'x', { challenge_id: id, challenge_type: 'fingerprint', model_id: '' }]),
        },
        label: 'verify:invalid',
        verifyLike: 'verify',
      };
    default:
      return {
        msg: { type: 'benchmark', request_id: id, payload: r.pick([{}, { benchmark_id: id, prompts: 'none' }, [1, 2]]) },
        label: 'benchmark:invalid',
        verifyLike: 'benchmark_response',
      };
  }
}

/** Frames with no usable envelope: never answered, always counted invalid. */
function garbage(r: Rng): { text: string; label: string } {
  const pick = r.int(0, 9);
  switch (pick) {
    case 0:
      return { text: '{"type":"inference","request_id":"x"', label: 'truncated JSON' };
    case 1:
      return { text: randomString(r, 40) || '{', label: 'not JSON' };
    case 2:
      return { text: JSON.stringify(r.pick([42, 'str', [], null, true, [{ type: 'inference' }]])), label: 'not an object' };
    case 3:
      return { text: JSON.stringify({ request_id: 'no-type', payload: {} }), label: 'no type' };
    case 4:
      return { text: JSON.stringify({ type: 7, request_id: 'type-number' }), label: 'type number' };
    case 5:
      return { text: JSON.stringify({ type: '', request_id: 'type-empty' }), label: 'type empty' };
    case 6:
      return { text: JSON.stringify({ type: 'x'.repeat(65), request_id: 'type-long' }), label: 'type too long' };
    case 7:
      return { text: JSON.stringify({ type: 'inference', request_id: 12345, payload: {} }), label: 'request_id number' };
    case 8:
      return { text: deep(r.int(1000, 50_000), '0'), label: 'deep array' };
    default: {
      const v = randomJson(r);
      // A random object may by chance look like an envelope; keep only those that cannot.
      if (v && typeof v === 'object' && !Array.isArray(v) && typeof (v as Obj).type === 'string') delete (v as Obj).type;
      return { text: JSON.stringify(v) ?? 'undefined', label: 'random JSON' };
    }
  }
}

/** The i-th frame of the seeded fuzz run. */
export function fuzzFrame(r: Rng, i: number, model: string): Frame {
  const id = `fz-${i}`;
  const roll = r();
  if (roll < 0.3) {
    const v = valid(r, id, model);
    // Valid messages may also carry noise the schema lets through: unknown fields, deep nesting, big text.
    const noisy = v.msg as { payload?: Obj };
    if (v.label === 'inference' && r.chance(0.3)) {
      const p = noisy.payload!;
      const depth = r.int(10, 30_000);
      p.extra = deepValue(depth, '"x"');
      (p.request as Obj).messages = [{ role: 'user', content: 'y'.repeat(r.int(0, r.chance(0.05) ? 200_000 : 100)) }];
      // Noise nested past the bounded reader's limit (the envelope and the payload are two levels more) is
      // refused unread: 400 on the request's result path, counted invalid.
      if (depth + 2 > MAX_JSON_DEPTH) {
        const stream = p.stream === true;
        return {
          text: render(v.msg),
          expect: { kind: 'reply', id, types: [stream ? 'stream_end' : 'ack'], failed: { statusCodes: [400], error: /deeper/ }, invalid: true },
          label: 'inference:deep-noise',
        };
      }
    }
    if (v.label === 'real-inference' && r.chance(0.2)) {
      // Nested deeper than any real request: refused as invalid (400 on its result path), never a crash.
      ((noisy.payload as Obj).request as Obj).messages = deepValue(20_000, '{"role":"user","content":"z"}');
      const stream = (noisy.payload as Obj).stream === true;
      return {
        text: render(v.msg),
        expect: { kind: 'reply', id, types: [stream ? 'stream_end' : 'ack'], failed: { statusCodes: [400], error: /deeper/ }, invalid: true },
        label: 'real-inference:deep',
      };
    }
    return { text: render(v.msg), expect: v.expect, label: v.label };
  }
  if (roll < 0.8) {
    const m = invalidPayload(r, id, r.chance(0.01));
    // verify / benchmark answer in their own reply type, with the reason in `error` (Go provider form).
    if (m.verifyLike)
      return { text: render(m.msg), expect: { kind: 'reply', id, types: [m.verifyLike, 'error'], codes: [400], failed: { error: /invalid/ } }, label: m.label };
    // A type the agent does not know: logged once, never answered, and not an invalid frame.
    if (m.unknown) return { text: render(m.msg), expect: { kind: 'none', invalid: false }, label: m.label };
    // An invalid inference is refused on its result path: none of these mutations asks to stream, so an ack.
    if (m.label.startsWith('inference:'))
      return { text: render(m.msg), expect: { kind: 'reply', id, types: ['ack'], failed: { statusCodes: [400], error: /./ }, invalid: true }, label: m.label };
    // Every mutation keeps the envelope's request_id, so the agent can (and must) answer it.
    return { text: render(m.msg), expect: { kind: 'bad', id }, label: m.label };
  }
  const g = garbage(r);
  return { text: g.text, expect: { kind: 'none', invalid: true }, label: g.label };
}
