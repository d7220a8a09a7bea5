// The bench engine: an OpenAI-compatible streaming server that stamps every chunk with the time it is
// written (`"t"`: performance.timeOrigin + performance.now(), in ms), so a reader on the same machine can
// tell how long the chunk took to reach it. It decodes like a continuous-batching engine (vLLM, SGLang):
// the first chunk goes out as soon as a request arrives, then one decode step every `stepMs` writes one
// chunk to every running stream. With phase 'staggered' each stream steps on its own timer at a random
// phase instead (an engine that does not batch, or streams that never line up). stepMs 0 means full
// speed: steps follow each other as fast as the sockets take the bytes (a stream whose socket is
// backed up waits for 'drain').
// Run as its own process: `node --import tsx bench/bench-engine.ts` prints "bench engine listening on <url>".
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';

export const BENCH_MODEL = 'bench';

const configBody = z.object({ stepMs: z.number().min(0).max(10_000), phase: z.enum(['batched', 'staggered']).optional() });
export type StepPhase = 'batched' | 'staggered';
const requestBody = z
  .object({
    model: z.string().optional(),
    max_tokens: z.number().int().min(1).max(1_000_000).optional(),
    stream: z.boolean().optional(),
  })
  .passthrough();

interface Running {
  res: http.ServerResponse;
  id: string;
  written: number;
  total: number;
  blocked: boolean;
  /** Its own step timer (staggered phase). */
  timer?: NodeJS.Timeout;
}

/** Wall-clock milliseconds with sub-millisecond resolution. */
export function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

export interface BenchEngine {
  url: string;
  close(): Promise<void>;
}

export async function startBenchEngine(port = 0): Promise<BenchEngine> {
  const running = new Set<Running>();
  let stepMs = 20;
  let phase: StepPhase = 'batched';
  let timer: NodeJS.Timeout | undefined;
  let spinning = false;
  let seq = 0;
  const created = Math.floor(Date.now() / 1000);

  const chunkText = (r: Running, delta: string, finish: string | null): string =>
    `data: {"id":"${r.id}","object":"chat.completion.chunk","created":${created},"model":"${BENCH_MODEL}","choices":[{"index":0,"delta":${delta},"finish_reason":${finish === null ? 'null' : `"${finish}"`}}],"t":${nowMs()}}\n\n`;

  /** Writes the next chunk of r; returns false once the stream has ended. */
  const writeNext = (r: Running): boolean => {
    r.written++;
    const last = r.written >= r.total;
    const ok = r.res.write(chunkText(r, `{"content":"tok${r.written} "}`, last ? 'stop' : null));
    if (last) {
      r.res.write(
        `data: {"id":"${r.id}","object":"chat.completion.chunk","created":${created},"model":"${BENCH_MODEL}","choices":[],"usage":{"prompt_tokens":8,"completion_tokens":${r.total},"total_tokens":${8 + r.total}},"t":${nowMs()}}\n\ndata: [DONE]\n\n`,
      );
      r.res.end();
      stop(r);
      return false;
    }
    if (!ok) {
      r.blocked = true;
      r.res.once('drain', () => {
        r.blocked = false;
        schedule();
      });
    }
    return true;
  };

  const stop = (r: Running): void => {
    clearTimeout(r.timer);
    running.delete(r);
  };

  /** Staggered phase: the stream's own steps, starting at a random point of the first step. */
  const ownSteps = (r: Running): void => {
    r.timer = setTimeout(() => {
      r.timer = setInterval(() => {
        if (!r.blocked) writeNext(r);
      }, stepMs);
      if (!r.blocked) writeNext(r);
    }, Math.random() * stepMs);
  };

  const step = (): void => {
    for (const r of running) if (!r.blocked) writeNext(r);
  };

  /** Keeps steps going while streams run: a fixed interval, or back-to-back at full speed. */
  const schedule = (): void => {
    if (running.size === 0) {
      clearInterval(timer);
      timer = undefined;
      return;
    }
    if (stepMs > 0 && phase === 'staggered') {
      for (const r of running) if (!r.timer) ownSteps(r);
      return;
    }
    if (stepMs > 0) {
      timer ??= setInterval(() => {
        step();
        if (running.size === 0) schedule();
      }, stepMs);
      return;
    }
    if (spinning) return;
    spinning = true;
    const spin = (): void => {
      step();
      const writable = [...running].some((r) => !r.blocked);
      if (writable) setImmediate(spin);
      else spinning = false;
    };
    setImmediate(spin);
  };

  const json = (res: http.ServerResponse, status: number, body: unknown): void => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  };

  const readBody = async (req: http.IncomingMessage): Promise<unknown> => {
    const parts: Buffer[] = [];
    for await (const c of req) parts.push(c as Buffer);
    const text = Buffer.concat(parts).toString('utf8');
    return text ? JSON.parse(text) : {};
  };

  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const handle = async (): Promise<void> => {
      if (req.method === 'GET' && (path === '/v1/models' || path === '/health')) {
        return json(res, 200, { object: 'list', data: [{ id: BENCH_MODEL, object: 'model', owned_by: 'bench' }] });
      }
      if (req.method === 'GET' && path === '/_bench/clock') return json(res, 200, { t: nowMs() });
      if (req.method === 'POST' && path === '/_bench/config') {
        const parsed = configBody.safeParse(await readBody(req));
        if (!parsed.success) return json(res, 400, { error: { message: `bad config: ${parsed.error.issues[0]?.message}` } });
        stepMs = parsed.data.stepMs;
        phase = parsed.data.phase ?? 'batched';
        clearInterval(timer);
        timer = undefined;
        for (const r of running) {
          clearTimeout(r.timer);
          delete r.timer;
        }
        schedule();
        return json(res, 200, { stepMs, phase });
      }
      if (req.method === 'POST' && path === '/v1/chat/completions') {
        const parsed = requestBody.safeParse(await readBody(req));
        if (!parsed.success || parsed.data.stream !== true) {
          return json(res, 400, { error: { message: 'the bench engine serves streaming chat requests only ("stream": true)' } });
        }
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        const r: Running = { res, id: `chatcmpl-bench-${++seq}`, written: 0, total: parsed.data.max_tokens ?? 16, blocked: false };
        res.on('close', () => stop(r));
        // Prefill done at once: the first chunk (the role) goes out now; the rest come with the steps.
        res.write(chunkText(r, '{"role":"assistant","content":""}', null));
        running.add(r);
        schedule();
        return;
      }
      json(res, 404, { error: { message: `no route ${req.method} ${path}` } });
    };
    handle().catch((e: Error) => {
      if (!res.headersSent) json(res, 400, { error: { message: `bad request: ${e.message}` } });
      else res.end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    close: async () => {
      clearInterval(timer);
      for (const r of running) clearTimeout(r.timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const engine = await startBenchEngine();
  process.stdout.write(`bench engine listening on ${engine.url}\n`);
  const stop = (): void => void engine.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
