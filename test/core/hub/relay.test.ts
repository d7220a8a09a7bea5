// HubRelay against a stand-in of the hub link (the narrow RelayLink port: what it was handed, whether it
// is up, whether the hub resumes, a socket that backs up) and the real engine-call service in front of
// engines on 127.0.0.1. What the hub must see (docs/hub-dialect.md): a stream that fails before any data
// opens with an error chunk; every refusal on its result path, never an `error` frame; nothing after the
// hub's cancel; resume-v1's kept answer replayed after last_seq, once and in order; the engine's one retry
// only before the first byte; and the request's ledger row committed before its final message leaves.
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { ModelRegistry } from '../../../src/core/models/registry';
import { syncScheduler } from '../../../src/core/engines/scheduler-sync';
import { LedgerBatch } from '../../../src/core/accounting/ledger-batch';
import type { ModelEntry } from '../../../src/core/config/config';
import { HubRelay, type RelayLink } from '../../../src/core/hub/relay';
import { InferenceRunner } from '../../../src/core/inference/runner';
import { Ledger } from '../../../src/core/ledger/ledger';
import { memoryLog } from '../../../src/core/base/log';
import { encodeOnce, parseInbound, type EncodedMessage, type Inbound, type Outbound } from '../../../src/core/protocol/messages';
import { RequestBook } from '../../../src/core/inference/requests';
import { Scheduler } from '../../../src/core/scheduler/scheduler';
import { flakyVllm, type StandInEngine } from '../../support/conformance/engines';
import { startTestEngine, type TestEngine } from '../../support/engine-server';
import { until } from '../../support/stack';
import { generatedText } from '../../support/traces';

const closers: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

interface Sent {
  type: string;
  request_id?: string;
  payload: Record<string, unknown>;
}

/** The hub link as the relay sees it: records what it is handed, in order. */
class StandInLink extends EventEmitter implements RelayLink {
  connected = true;
  hubResumes = false;
  readonly sent: Sent[] = [];
  /** Called as each message is handed over. */
  onHand?: (m: Sent) => void;
  private backedUp = false;
  private readonly waiting: Array<() => void> = [];

  sendControl(m: Outbound): boolean {
    if (!this.connected) return false;
    this.hand(encodeOnce(m).text);
    return true;
  }

  sendData(enc: EncodedMessage): boolean | Promise<boolean> {
    if (!this.connected) return false;
    if (!this.backedUp) {
      this.hand(enc.text);
      return true;
    }
    return new Promise((resolve) =>
      this.waiting.push(() => {
        if (!this.connected) return resolve(false);
        this.hand(enc.text);
        resolve(true);
      }),
    );
  }

  get waitingCount(): number {
    return this.waiting.length;
  }

  /** The socket stops taking data: writers wait. */
  backUp(): void {
    this.backedUp = true;
  }

  /** The socket takes data again. */
  drain(): void {
    this.backedUp = false;
    for (const w of this.waiting.splice(0)) w();
  }

  /** The connection drops: waiting writers hear false, then the link says it is down. */
  down(): void {
    this.connected = false;
    this.drain();
    this.emit('disconnected');
  }

  /** A new connection registered. */
  up(): void {
    this.connected = true;
    this.emit('registered');
  }

  of(id: string): Sent[] {
    return this.sent.filter((m) => m.request_id === id);
  }

  private hand(text: string): void {
    const m = JSON.parse(text) as Sent;
    this.sent.push(m);
    this.onHand?.(m);
  }
}

function serving(
  entries: Record<string, ModelEntry>,
  opts: { resumeGraceMs?: number; beforeFinal?: (id: string) => void | Promise<void>; ledger?: Ledger } = {},
) {
  const registry = new ModelRegistry();
  registry.rebuild({ entries, configModels: [], engines: [], prefs: {} });
  const scheduler = new Scheduler({ maxConcurrentPerEndpoint: 8 });
  syncScheduler(registry, scheduler, { maxConcurrentPerEndpoint: 8, capacityAuto: false } as never);
  const book = new RequestBook();
  const runner = new InferenceRunner({ registry, book, admit: (m, o) => scheduler.admit(m, o), log: memoryLog().child('requests'), retryDelayMs: 10 });
  const link = new StandInLink();
  const batch = new LedgerBatch(opts.ledger);
  book.on('finished', (record) => {
    // As the agent's wiring does (EarningsService marks a hub request's row as awaiting its final message).
    if (record.source === 'hub') record.awaitingHub = true;
    batch.queue(record);
  });
  const finals: string[] = [];
  const hubEnded: string[] = [];
  const relay = new HubRelay({
    link,
    runner,
    log: memoryLog().child('relay'),
    resumeGraceMs: opts.resumeGraceMs ?? 10_000,
    resumeTtlMs: 60_000,
    beforeFinal: opts.beforeFinal ?? (() => batch.committed()),
    finalSent: (id) => {
      finals.push(id);
      batch.markDelivered(id);
    },
    hubEnded: (id) => hubEnded.push(id),
  });
  closers.push(() => {
    relay.close();
    scheduler.close();
    batch.flush();
  });
  return { relay, link, finals, hubEnded, batch };
}

async function engine(opts: Parameters<typeof startTestEngine>[0]): Promise<TestEngine> {
  const e = await startTestEngine(opts);
  closers.push(() => e.close());
  return e;
}

function inference(id: string, stream: boolean, model = 'm'): Extract<Inbound, { type: 'inference' }> {
  const msg = parseInbound(
    JSON.stringify({
      type: 'inference',
      request_id: id,
      payload: { model_id: model, stream, request: { model, stream, messages: [{ role: 'user', content: 'hi' }] } },
    }),
  );
  if (msg.type !== 'inference') throw new Error('not an inference');
  return msg;
}

function cancel(id: string): Extract<Inbound, { type: 'cancel' }> {
  const msg = parseInbound(JSON.stringify({ type: 'cancel', request_id: id, payload: { request_id: id, reason: 'client went away' } }));
  if (msg.type !== 'cancel') throw new Error('not a cancel');
  return msg;
}

function resume(id: string, lastSeq: number): Extract<Inbound, { type: 'resume' }> {
  const msg = parseInbound(JSON.stringify({ type: 'resume', request_id: id, payload: { request_id: id, last_seq: lastSeq } }));
  if (msg.type !== 'resume') throw new Error('not a resume');
  return msg;
}

/** The answer's text as the hub would put it together from the chunks. */
const textOf = (ms: Sent[]): string =>
  dataChunks(ms)
    .map((m) => (m.payload.chunk as { choices?: Array<{ delta?: { content?: string } }> }).choices?.[0]?.delta?.content ?? '')
    .join('');
const seqs = (ms: Sent[]): number[] => ms.map((m) => m.payload.seq as number);
const dataChunks = (ms: Sent[]): Sent[] => ms.filter((m) => m.type === 'stream_chunk' && m.payload.chunk !== null);

describe('HubRelay: what the hub is sent', () => {
  it("a stream: chunks numbered from 1 with the id in envelope and payload, a done chunk, then stream_end with the engine's counts; its final reported sent once", async () => {
    const e = await engine({ mode: { generate: 5 } });
    const { relay, link, finals } = serving({ m: { endpoint: e.url } });
    await relay.inference(inference('s1', true));
    const ms = link.of('s1');
    expect(ms.map((m) => m.type)).toEqual([...Array(dataChunks(ms).length + 1).fill('stream_chunk'), 'stream_end']);
    expect(dataChunks(ms).length).toBeGreaterThan(0);
    expect(seqs(ms)).toEqual(ms.map((_m, i) => i + 1));
    for (const m of ms) expect(m.payload.request_id).toBe('s1');
    expect(ms.at(-2)!.payload).toMatchObject({ chunk: null, done: true });
    expect(ms.at(-1)!.payload).toMatchObject({ tokens_input: 8, tokens_output: 5 });
    expect(ms.at(-1)!.payload).not.toHaveProperty('status_code');
    expect(finals).toEqual(['s1']);
    expect(relay.activeCount).toBe(0);
  });

  it('a stream that fails before any data opens with an error chunk, then stream_end with the status; never an error frame', async () => {
    const e = await engine({ mode: { status: 500, body: { object: 'error', message: 'CUDA out of memory', type: 'InternalServerError', code: 500 } } });
    const { relay, link } = serving({ m: { endpoint: e.url } });
    await relay.inference(inference('f1', true));
    const ms = link.of('f1');
    expect(ms.map((m) => m.type)).toEqual(['stream_chunk', 'stream_end']);
    expect(ms[0]!.payload).toMatchObject({ request_id: 'f1', chunk: null, done: true, seq: 1 });
    expect(String(ms[0]!.payload.error)).toContain('CUDA out of memory');
    expect(ms[1]!.payload).toMatchObject({ request_id: 'f1', status_code: 500, seq: 2 });
    expect(link.sent.filter((m) => m.type === 'error')).toEqual([]);
  });

  it('refusals go on the result path: an unknown model (stream and not), an engine 400 (not stream) — an ack with the status, response null', async () => {
    const e = await engine({ mode: { status: 400, body: { object: 'error', message: 'max_tokens is too large', type: 'BadRequestError', code: 400 } } });
    const { relay, link } = serving({ m: { endpoint: e.url } });
    await relay.inference(inference('u1', true, 'nope'));
    await relay.inference(inference('u2', false, 'nope'));
    await relay.inference(inference('b1', false));
    expect(link.of('u1').map((m) => m.type)).toEqual(['stream_chunk', 'stream_end']);
    expect(link.of('u1')[0]!.payload).toMatchObject({ chunk: null, done: true });
    expect(link.of('u1')[1]!.payload.status_code).toBe(404);
    expect(link.of('u2')).toHaveLength(1);
    expect(link.of('u2')[0]).toMatchObject({ type: 'ack', payload: { request_id: 'u2', response: null, status_code: 404, seq: 1 } });
    expect(link.of('b1')).toHaveLength(1);
    expect(link.of('b1')[0]).toMatchObject({ type: 'ack', payload: { request_id: 'b1', response: null, status_code: 400 } });
    expect(String(link.of('b1')[0]!.payload.error)).toContain('max_tokens is too large');
    expect(link.sent.filter((m) => m.type === 'error')).toEqual([]);
  });

  it('a duplicate of a running request is ignored, and of an answered one while its answer is kept for resume: the engine is called once', async () => {
    const e = await engine({ mode: { generate: 3 } });
    const { relay, link } = serving({ m: { endpoint: e.url } });
    link.hubResumes = true;
    const first = relay.inference(inference('d1', true));
    await relay.inference(inference('d1', true));
    await first;
    await relay.inference(inference('d1', true));
    expect(e.requests.filter((q) => q.method === 'POST')).toHaveLength(1);
    expect(link.of('d1').filter((m) => m.type === 'stream_end')).toHaveLength(1);
  });
});

describe("HubRelay: the hub's cancel", () => {
  it('stops the engine and sends nothing more for it: no chunk, no stream_end, no final reported; the hub ended it', async () => {
    const e = await engine({ mode: { generate: 10_000, delayMs: 5 } });
    const { relay, link, finals, hubEnded } = serving({ m: { endpoint: e.url } });
    const served = relay.inference(inference('c1', true));
    await until(() => dataChunks(link.of('c1')).length >= 3, 'streaming');
    relay.cancel(cancel('c1'));
    const countAtCancel = link.of('c1').length;
    expect(relay.deliveryOf('c1')).toBe('cancelled');
    await served;
    await e.waitForAbort(1);
    expect(link.of('c1')).toHaveLength(countAtCancel);
    expect(link.of('c1').some((m) => m.type === 'stream_end')).toBe(false);
    expect(finals).toEqual([]);
    expect(hubEnded).toEqual(['c1']);
    expect(relay.counters.cancelledByHub).toBe(1);
  });

  it('a cancel that comes while the final waits for its ledger commit: still nothing goes out', async () => {
    const e = await engine({ mode: { generate: 3 } });
    let release!: () => void;
    let waited = false;
    const held = new Promise<void>((r) => (release = r));
    const s = serving({ m: { endpoint: e.url } }, { beforeFinal: () => ((waited = true), held) });
    const served = s.relay.inference(inference('c2', true));
    await until(() => waited, 'the final waits for its commit');
    s.relay.cancel(cancel('c2'));
    release();
    await served;
    expect(s.link.of('c2').length).toBeGreaterThan(0);
    expect(s.link.of('c2').some((m) => m.type === 'stream_end' || m.payload.done === true)).toBe(false);
    expect(s.hubEnded).toEqual(['c2']);
    expect(s.finals).toEqual([]);
  });
});

describe('HubRelay: resume-v1', () => {
  it('while the link is down the request keeps generating and its messages are kept; resume sends everything after last_seq, once, in order', async () => {
    const e = await engine({ mode: { generate: 60, delayMs: 10 } });
    const { relay, link, finals } = serving({ m: { endpoint: e.url } });
    link.hubResumes = true;
    const served = relay.inference(inference('r1', true));
    await until(() => dataChunks(link.of('r1')).length >= 5, 'streaming');
    link.down();
    expect(relay.deliveryOf('r1')).toBe('detached');
    const before = link.of('r1').length;
    const lastSeq = before - 2; // the hub says it got less than was handed: the gap is replayed too
    await until(() => relay.retainedBytes > 0 && e.requests[0]!.eventsWritten >= 20, 'generation goes on while detached');
    link.up();
    expect(link.of('r1')).toHaveLength(before);
    await relay.resume(resume('r1', lastSeq));
    await served;
    const after = link.of('r1').slice(before);
    expect(seqs(after)[0]).toBe(lastSeq + 1);
    expect(seqs(after)).toEqual(after.map((_m, i) => lastSeq + 1 + i));
    expect(after.at(-1)!.type).toBe('stream_end');
    expect(e.abortedCount).toBe(0);
    expect(finals).toEqual(['r1']);
    expect(relay.counters.resumed).toBe(1);
  });

  it('a request the hub does not resume within the grace period is cancelled at the engine', async () => {
    const e = await engine({ mode: { generate: 10_000, delayMs: 5 } });
    const { relay, link } = serving({ m: { endpoint: e.url } }, { resumeGraceMs: 50 });
    link.hubResumes = true;
    const served = relay.inference(inference('g1', true));
    await until(() => dataChunks(link.of('g1')).length >= 2, 'streaming');
    link.down();
    link.up();
    await served;
    await e.waitForAbort(1);
    expect(relay.counters.cancelledUnresumed).toBe(1);
    expect(link.of('g1').some((m) => m.type === 'stream_end')).toBe(false);
    // Nothing is kept for it: a late resume is told there is nothing to resume (the one error frame of the dialect).
    await relay.resume(resume('g1', 0));
    expect(link.of('g1').at(-1)).toMatchObject({ type: 'error', payload: { code: 410 } });
  });

  it('against a hub that does not resume, a dropped link cancels the request at the engine and nothing is kept', async () => {
    const e = await engine({ mode: { generate: 10_000, delayMs: 5 } });
    const { relay, link, finals } = serving({ m: { endpoint: e.url } });
    const served = relay.inference(inference('n1', true));
    await until(() => dataChunks(link.of('n1')).length >= 2, 'streaming');
    link.down();
    expect(relay.deliveryOf('n1')).toBe('dropped');
    await served;
    await e.waitForAbort(1);
    expect(relay.retainedBytes).toBe(0);
    expect(relay.counters.abortedOnDisconnect).toBe(1);
    // Its final never reached the link: its ledger row stays undelivered.
    expect(finals).toEqual([]);
  });

  it('a backed-up link slows the request: one chunk waits (the engine is read no further) and goes when the socket drains; none is lost', async () => {
    const e = await engine({ mode: { generate: 40 } });
    const { relay, link } = serving({ m: { endpoint: e.url } });
    link.backUp();
    const served = relay.inference(inference('p1', true));
    await until(() => link.waitingCount === 1 && (e.requests[0]?.eventsWritten ?? 0) >= 40, 'a chunk waits and the engine wrote its answer');
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    expect(link.waitingCount).toBe(1);
    expect(link.of('p1')).toHaveLength(0);
    link.drain();
    await served;
    const ms = link.of('p1');
    expect(textOf(ms)).toBe(generatedText(40));
    expect(seqs(ms)).toEqual(ms.map((_m, i) => i + 1));
  });
});

describe('HubRelay: the one retry of an engine failure', () => {
  async function standIn(p: Promise<StandInEngine>): Promise<StandInEngine> {
    const e = await p;
    closers.push(() => e.close());
    return e;
  }

  it('a 502 before any byte is tried once more: the hub sees one clean stream from seq 1, no error chunk', async () => {
    const e = await standIn(flakyVllm('m'));
    const { relay, link } = serving({ m: { endpoint: e.url } });
    await relay.inference(inference('t1', true));
    expect(e.generations()).toHaveLength(2);
    const ms = link.of('t1');
    expect(ms.some((m) => m.payload.error !== undefined)).toBe(false);
    expect(seqs(ms)).toEqual(ms.map((_m, i) => i + 1));
    expect(ms.at(-1)).toMatchObject({ type: 'stream_end' });
    expect(ms.at(-1)!.payload).not.toHaveProperty('status_code');
  });

  it('an engine that drops after a byte left is not tried again: the chunks sent, then stream_end with the failure and no error chunk', async () => {
    const e = await engine({ mode: { generate: 50, dropAfterEvents: 3 } });
    const { relay, link } = serving({ m: { endpoint: e.url } });
    await relay.inference(inference('t2', true));
    expect(e.requests.filter((q) => q.method === 'POST')).toHaveLength(1);
    const ms = link.of('t2');
    expect(dataChunks(ms).length).toBeGreaterThan(0);
    expect(ms.filter((m) => m.type === 'stream_chunk' && m.payload.error !== undefined)).toEqual([]);
    expect(ms.at(-1)).toMatchObject({ type: 'stream_end', payload: { status_code: 502 } });
  });
});

describe('HubRelay: commit before the final message', () => {
  it("the request's ledger row is committed when its stream_end or result is handed over, and marked delivered after", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-ledger-'));
    const file = path.join(dir, 'ledger.sqlite');
    const ledger = Ledger.open(file, { log: memoryLog().child('ledger') });
    closers.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    closers.push(() => ledger.close());
    const reader = new Database(file, { readonly: true });
    closers.push(() => reader.close());
    const rowOf = (id: string) => reader.prepare('SELECT delivered FROM usage WHERE request_id = ?').get(id) as { delivered: number } | undefined;

    const e = await engine({ mode: { generate: 4 } });
    const { relay, link } = serving({ m: { endpoint: e.url } }, { ledger });
    const atFinal = new Map<string, { delivered: number } | undefined>();
    link.onHand = (m) => {
      if (m.type === 'stream_end' || (m.type === 'ack' && m.request_id)) atFinal.set(m.request_id!, rowOf(m.request_id!));
    };
    await Promise.all([relay.inference(inference('l1', true)), relay.inference(inference('l2', false)), relay.inference(inference('l3', true, 'nope'))]);
    // In the file, seen from another connection, before the final left: committed and not yet delivered.
    expect(Object.fromEntries(atFinal)).toEqual({ l1: { delivered: 0 }, l2: { delivered: 0 }, l3: { delivered: 0 } });
    await until(() => rowOf('l1')?.delivered === 1 && rowOf('l2')?.delivered === 1 && rowOf('l3')?.delivered === 1, 'marked delivered after their turn');
  });

  it('the final waits for the commit: nothing final is handed over until beforeFinal settles', async () => {
    const e = await engine({ mode: { generate: 2 } });
    let release!: () => void;
    let waited = false;
    const held = new Promise<void>((r) => (release = r));
    const s = serving({ m: { endpoint: e.url } }, { beforeFinal: () => ((waited = true), held) });
    const served = s.relay.inference(inference('w1', true));
    await until(() => waited, 'the final waits for its commit');
    const atRelease = s.link.of('w1');
    release();
    await served;
    expect(dataChunks(atRelease)).toHaveLength(atRelease.length);
    expect(
      s.link
        .of('w1')
        .slice(atRelease.length)
        .map((m) => m.type),
    ).toEqual(['stream_chunk', 'stream_end']);
    expect(s.finals).toEqual(['w1']);
  });
});
