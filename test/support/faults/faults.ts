// Shared pieces of the fault-injection suite: a seeded PRNG, the per-scenario counts line, and an
// audit of generated streams ("tok0 tok1 …") that tells lost chunks from doubled ones.
import type { DevHub } from '../../../src/cli/dev-hub';
import { mulberry32 } from '../rng';
import { chat, chunkText, readSse } from '../stack';
import type { LinkReasonCode } from '../../../src/shared/types';

/** FAULTS_FULL=1 runs the long form: more rounds, more fuzz. */
export const FULL = process.env.FAULTS_FULL === '1';

/** Picks the short or the long figure. */
export function scale(short: number, full: number): number {
  return FULL ? full : short;
}

/** Seeded PRNG (mulberry32): the same seed gives the same faults on every run. */
export interface Rng {
  (): number;
  /** Integer in [min, max]. */
  int(min: number, max: number): number;
  pick<T>(items: readonly T[]): T;
  chance(p: number): boolean;
}

export function rng(seed: number): Rng {
  const next = mulberry32(seed);
  const r = next as Rng;
  r.int = (min, max) => min + Math.floor(next() * (max - min + 1));
  r.pick = (items) => items[Math.floor(next() * items.length)]!;
  r.chance = (p) => next() < p;
  return r;
}

export interface Counts {
  injected: number;
  recovered: number;
  lost: number;
  duplicated: number;
}

/** Prints one `FAULTS {json}` line per scenario (the CI log keeps the table). */
export function report(scenario: string, counts: Counts, extra: Record<string, unknown> = {}): void {
  console.log(`FAULTS ${JSON.stringify({ scenario, ...counts, ...extra })}`);
}

/** Compares a generated answer ("tok0 tok1 … tok{n-1}") with what should have arrived (n = 0: only doubles count). */
export function audit(text: string, n: number): { lost: number; duplicated: number; outOfOrder: boolean } {
  const seen = new Map<number, number>();
  const order: number[] = [];
  for (const word of text.split(' ')) {
    const m = /^tok(\d+)$/.exec(word);
    if (!m) continue;
    const i = Number(m[1]);
    seen.set(i, (seen.get(i) ?? 0) + 1);
    order.push(i);
  }
  let lost = 0;
  let duplicated = 0;
  for (let i = 0; i < n; i++) if (!seen.has(i)) lost++;
  for (const c of seen.values()) duplicated += c - 1;
  const outOfOrder = order.some((v, i) => i > 0 && v < order[i - 1]!);
  return { lost, duplicated, outOfOrder };
}

export interface StreamOutcome {
  status: number;
  text: string;
  /** An error the hub put in the body (JSON error or an SSE `error` event). */
  error?: string;
  /** That error's code, when the hub gave one (the dev hub passes on the provider's status code). */
  code?: number | string;
  sawDone: boolean;
}

/** One streamed chat request through the dev hub's HTTP API, read to the end. Never rejects. */
export async function streamChat(hub: DevHub, model: string, maxTokens: number, signal?: AbortSignal): Promise<StreamOutcome> {
  try {
    return await readStream(hub, model, maxTokens, signal);
  } catch (e) {
    return { status: 0, text: '', error: `the HTTP client failed: ${(e as Error).message}`, sawDone: false };
  }
}

async function readStream(hub: DevHub, model: string, maxTokens: number, signal?: AbortSignal): Promise<StreamOutcome> {
  const res = await chat(
    hub,
    { model, stream: true, max_tokens: maxTokens, messages: [{ role: 'user', content: `n=${maxTokens}` }] },
    signal ? { signal } : {},
  );
  if (!(res.headers.get('content-type') ?? '').includes('text/event-stream')) {
    const body = (await res.json()) as { error?: { message?: string; code?: number | string } };
    return {
      status: res.status,
      text: '',
      error: body.error?.message ?? 'no error message',
      ...(body.error?.code !== undefined ? { code: body.error.code } : {}),
      sawDone: false,
    };
  }
  const events = await readSse(res);
  const err = events.find((e): e is { error: { message?: string; code?: number | string } } => typeof e === 'object' && e !== null && 'error' in e);
  return {
    status: res.status,
    text: chunkText(events),
    sawDone: events.includes('[DONE]'),
    ...(err ? { error: err.error.message ?? 'error without message' } : {}),
    ...(err?.error.code !== undefined ? { code: err.error.code } : {}),
  };
}

/** Resolves with the reason (prose, for reports) and the stable code of the link's next disconnect. */
export function nextDisconnect(link: {
  once(ev: 'disconnected', cb: (reason: string, code: LinkReasonCode) => void): unknown;
}): Promise<{ reason: string; code: LinkReasonCode }> {
  return new Promise((resolve) => link.once('disconnected', (reason, code) => resolve({ reason, code })));
}
