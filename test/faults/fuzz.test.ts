// Fault: the hub sends 10,000 random and mutated messages (seeded). Zero crashes; every invalid
// message that names a request is answered (an inference on its result path with 400, others with
// `error` code 400); unknown types are not answered; valid ones get their normal answer exactly once; the link stays up, and a normal request succeeds afterwards.
import { afterEach, describe, expect, it } from 'vitest';
import { logEntries, registered, startStack, until, type Stack } from '../support/stack';
import { generatedText } from '../support/traces';
import { fuzzFrame, type Frame } from '../support/faults/fuzz-messages';
import { report, rng, scale, streamChat } from '../support/faults/faults';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

const FINAL_TYPES = new Set(['error', 'ack', 'stream_end', 'verify', 'benchmark_response']);

describe('hub message fuzz', () => {
  it(
    'answers every invalid message, serves the valid ones once, never crashes or drops the link',
    async () => {
      const total = scale(10_000, 50_000);
      const batch = 500;
      const r = rng(0x5eed04);
      stack = await startStack({ engines: [{ mode: { generate: 3 } }] });
      await registered(stack);
      const { hub, agent } = { hub: stack.hub!, agent: stack.agent };
      const model = stack.engines[0]!.modelIds[0]!;
      const answers = new Map<string, Array<{ type: string; code?: number; message?: string; status?: number; error?: string }>>();
      hub.events.on('message', (m: { type: string; payload: Record<string, unknown>; requestId?: string }) => {
        if (!FINAL_TYPES.has(m.type)) return;
        const id = typeof m.payload.request_id === 'string' ? m.payload.request_id : m.requestId;
        if (!id?.startsWith('fz-')) return;
        const list = answers.get(id) ?? [];
        const p = m.payload;
        list.push({
          type: m.type,
          ...(p.code !== undefined ? { code: Number(p.code) } : {}),
          ...(typeof p.message === 'string' ? { message: p.message } : {}),
          ...(p.status_code !== undefined ? { status: Number(p.status_code) } : {}),
          ...(typeof p.error === 'string' ? { error: p.error } : {}),
        });
        answers.set(id, list);
      });
      let disconnects = 0;
      agent.on('disconnected', () => disconnects++);
      const invalidBefore = agent.hubStatus().counters.invalid;
      const dialsBefore = agent.hubStatus().counters.dials;
      const started = Date.now();

      const frames: Frame[] = [];
      const settled = (f: Frame): boolean => f.expect.kind === 'none' || (answers.get(f.expect.id)?.length ?? 0) > 0;
      for (let i = 0; i < total; i += batch) {
        const part: Frame[] = [];
        for (let j = i; j < Math.min(total, i + batch); j++) part.push(fuzzFrame(r, j, model));
        for (const f of part) hub.broadcastRaw(f.text);
        frames.push(...part);
        await until(() => part.every(settled), `answers to frames ${i}..${i + part.length - 1}`, 20_000);
      }
      // Barrier: one more answered request, so any late duplicate of the above has arrived too.
      hub.broadcastRaw(JSON.stringify({ type: 'resume', payload: { request_id: 'fz-barrier', last_seq: 0 } }));
      await until(() => answers.has('fz-barrier'), 'barrier answer');
      const elapsedMs = Date.now() - started;

      const counts = { injected: frames.length, recovered: 0, lost: 0, duplicated: 0 };
      const problems: string[] = [];
      let expectedInvalid = 0;
      const byLabel = new Map<string, number>();
      for (const f of frames) {
        byLabel.set(f.label, (byLabel.get(f.label) ?? 0) + 1);
        const e = f.expect;
        if (e.kind === 'bad' || e.invalid === true) expectedInvalid++;
        if (e.kind === 'none') {
          counts.recovered++;
          continue;
        }
        const got = answers.get(e.id) ?? [];
        if (got.length === 0) counts.lost++;
        if (got.length > 1) counts.duplicated += got.length - 1;
        const a = got[0];
        let ok = false;
        if (a && e.kind === 'bad') ok = a.type === 'error' && a.code === 400 && (a.message ?? '') !== '';
        else if (a && e.kind === 'reply') {
          ok = e.types.includes(a.type);
          if (a.type === 'error') ok &&= e.codes === undefined || e.codes.includes(a.code ?? -1);
          else if (e.failed) ok &&= (e.failed.statusCodes === undefined || e.failed.statusCodes.includes(a.status ?? -1)) && e.failed.error.test(a.error ?? '');
        }
        if (ok && got.length === 1) counts.recovered++;
        else if (a !== undefined && problems.length < 10) problems.push(`${f.label} (${e.id}): expected ${JSON.stringify(e)}, got ${JSON.stringify(got)}`);
      }
      const errorLogs = (await logEntries(agent, 2000, 'error')).length;
      report('hub-fuzz', counts, {
        elapsedMs,
        invalidCounted: agent.hubStatus().counters.invalid - invalidBefore,
        expectedInvalid,
        disconnects,
        errorLogs,
        kinds: byLabel.size,
      });
      expect(problems).toEqual([]);
      expect(counts.lost).toBe(0);
      expect(counts.duplicated).toBe(0);
      expect(agent.hubStatus().counters.invalid - invalidBefore).toBe(expectedInvalid);
      expect(disconnects).toBe(0);
      expect(agent.hubStatus().counters.dials).toBe(dialsBefore);
      expect(agent.hubStatus().connected).toBe(true);
      expect(byLabel.size).toBeGreaterThan(40); // the generator reached every kind of frame
      // Still serving.
      const after = await streamChat(hub, model, 3);
      expect(after.error).toBeUndefined();
      expect(after.text).toBe(generatedText(3));
    },
    scale(120_000, 300_000),
  ); // 10,000 messages: CPU-bound, so it stretches on a busy machine
});
