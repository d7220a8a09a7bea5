// A real test engine: node:http on 127.0.0.1 that speaks like vLLM / SGLang / Ollama / llama.cpp /
// LM Studio / TGI. It serves the real SSE traces byte for byte (split on event boundaries), a long
// generated stream, and failure modes, and records what it was asked. Used by every integration test.
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { EventEmitter } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import type { EngineType } from '../../src/shared/types';
import { readTrace, splitEvents, summarizeTrace, generatedText } from './traces';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** Parsed JSON body (undefined when empty or not JSON). */
  body: unknown;
  rawBody: string;
  /** The client closed before the response ended. */
  aborted: boolean;
  /** SSE events written for this request. */
  eventsWritten: number;
  /** Client port: equal ports mean a kept-alive connection was reused. */
  remotePort?: number;
}

/** Streaming behaviour; fields combine. */
export interface StreamMode {
  /** Pause between events. */
  delayMs?: number;
  /** Destroy the socket after this many events (a crash mid-stream). */
  dropAfterEvents?: number;
  /** Stop writing after this many events and keep the socket open (a stuck engine). */
  stallAfterEvents?: number;
  /** Serve n generated tokens ("tok0 tok1 …", capped by max_tokens) instead of a trace. */
  generate?: number;
}
/** Answer every inference request with this HTTP status and JSON body before the first byte. */
export interface ErrorMode {
  status: number;
  body?: unknown;
}
/** 'down' closes the port (connections refused); 'hang' never sends headers; 'garbage' sends non-JSON data lines. */
export type EngineMode = 'ok' | 'down' | 'hang' | 'garbage' | ErrorMode | StreamMode;

export interface TestEngineOptions {
  engineType?: EngineType;
  /** Reported by the identity endpoint (/version, /info, …). */
  version?: string;
  /** Model ids for /v1/models (default: the engine's *-models.json trace). */
  models?: string[];
  /** model -> trace file that answers requests for it. */
  traces?: Record<string, string>;
  /** Default trace for /v1/chat/completions (vllm-chat-basic.sse). */
  chatTrace?: string;
  /** Default trace for /v1/completions (vllm-completions-include-usage.sse). */
  completionsTrace?: string;
  mode?: EngineMode;
  /** One model's own failure (Ollama, LM Studio, a vLLM with LoRA names: one name fails, its neighbours serve). */
  modelModes?: Record<string, ErrorMode>;
  /** Require `Authorization: Bearer <apiKey>` on /v1/*. */
  apiKey?: string;
  /** Answer 404 (model not found) for models not in the list. */
  strictModels?: boolean;
  /** Listen on this port (default 0). */
  port?: number;
  /** Prompt tokens reported in generate mode (default 8). */
  promptTokens?: number;
  /** Generate mode: put vLLM-style `token_ids` on each chunk. */
  tokenIds?: boolean;
  /**
   * Metadata answers as the engine's docs show them, by "METHOD /path" ("GET /props", "POST /api/show",
   * "GET /v1/models"): a JSON body, or a function of the request's JSON body. Answered before the defaults.
   */
  routes?: Record<string, unknown | ((body: unknown) => unknown)>;
}

const DEFAULT_CHAT = 'vllm-chat-basic.sse';
const DEFAULT_COMPLETIONS = 'vllm-completions-include-usage.sse';

function isError(m: EngineMode): m is ErrorMode {
  return typeof m === 'object' && 'status' in m;
}

export class TestEngine extends EventEmitter {
  readonly requests: RecordedRequest[] = [];
  readonly engineType: EngineType;
  abortedCount = 0;
  /** SSE events handed to res.write. */
  eventsWritten = 0;
  /** Events the socket took without backpressure (write returned true, or after 'drain'). */
  eventsAccepted = 0;
  /** Streams whose last write returned false and that wait for 'drain'. */
  streamsWaiting = 0;
  /** When the current drain wait began (epoch ms). */
  drainSince = 0;
  activeStreams = 0;
  port = 0;
  private mode: EngineMode;
  private readonly server: http.Server;
  private readonly sockets = new Set<Socket>();
  private readonly ownDrops = new WeakSet<http.ServerResponse>();
  private listening = false;
  private closing = false;

  constructor(readonly opts: TestEngineOptions = {}) {
    super();
    this.setMaxListeners(0);
    this.engineType = opts.engineType ?? 'vllm';
    this.mode = opts.mode ?? 'ok';
    this.server = http.createServer((req, res) => void this.handle(req, res));
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
  }

  /** A write returned false and the engine waits for 'drain' (the client stopped reading). */
  get waitingForDrain(): boolean {
    return this.streamsWaiting > 0;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get modelIds(): string[] {
    return modelIds(this.engineType, this.opts.models);
  }

  async listen(port = this.opts.port ?? 0): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      const onError = (e: Error) => reject(e);
      this.server.once('error', onError);
      this.server.listen(port, '127.0.0.1', () => {
        this.server.off('error', onError);
        resolve();
      });
    });
    this.port = (this.server.address() as AddressInfo).port;
    this.listening = true;
  }

  /** Change behaviour. 'down' closes the port; any other mode after 'down' listens again on the same port. */
  async setMode(mode: EngineMode): Promise<void> {
    this.mode = mode;
    if (mode === 'down') {
      if (this.listening) await this.shutdown();
    } else if (!this.listening) {
      await this.listen(this.port);
    }
  }

  /** One model's own failure from now on (undefined: it serves as the engine does). */
  setModelMode(model: string, mode: ErrorMode | undefined): void {
    const modes = { ...this.opts.modelModes };
    if (mode) modes[model] = mode;
    else delete modes[model];
    this.opts.modelModes = modes;
  }

  async close(): Promise<void> {
    this.mode = 'down';
    if (this.listening) await this.shutdown();
    this.removeAllListeners();
  }

  waitForRequests(n: number): Promise<RecordedRequest> {
    return this.waitFor(
      () => this.requests.length >= n,
      () => this.requests[n - 1] as RecordedRequest,
    );
  }

  /** Resolves when at least n requests were aborted by the client. */
  waitForAbort(n = 1): Promise<void> {
    return this.waitFor(
      () => this.abortedCount >= n,
      () => undefined,
    );
  }

  /**
   * Resolves when the engine is paused: a write hit backpressure and has waited for 'drain' for at
   * least `minMs` (a short wait also happens while a fast client reads; that is not a pause).
   */
  waitForBackpressure(minMs = 50): Promise<void> {
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const check = () => {
        if (!this.waitingForDrain) {
          if (timer) clearTimeout(timer);
          timer = undefined;
          return;
        }
        const left = this.drainSince + minMs - Date.now();
        if (left <= 0) {
          this.off('progress', check);
          if (timer) clearTimeout(timer);
          resolve();
        } else {
          timer ??= setTimeout(() => {
            timer = undefined;
            check();
          }, left);
        }
      };
      this.on('progress', check);
      check();
    });
  }

  /** Resolves when at least n SSE events were written in total. */
  waitForEvents(n: number): Promise<void> {
    return this.waitFor(
      () => this.eventsWritten >= n,
      () => undefined,
    );
  }

  private waitFor<T>(cond: () => boolean, value: () => T): Promise<T> {
    if (cond()) return Promise.resolve(value());
    return new Promise((resolve) => {
      const check = () => {
        if (!cond()) return;
        this.off('progress', check);
        resolve(value());
      };
      this.on('progress', check);
    });
  }

  private async shutdown(): Promise<void> {
    this.closing = true;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const s of this.sockets) s.destroy();
    await closed;
    this.listening = false;
    this.closing = false;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const rawBody = Buffer.concat(chunks).toString('utf8');
    let body: unknown;
    try {
      body = rawBody ? JSON.parse(rawBody) : undefined;
    } catch {
      body = undefined;
    }
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const rec: RecordedRequest = {
      method: req.method ?? 'GET',
      path,
      headers: req.headers,
      body,
      rawBody,
      aborted: false,
      eventsWritten: 0,
      remotePort: req.socket.remotePort,
    };
    this.requests.push(rec);
    res.on('close', () => {
      if (res.writableEnded || this.closing || this.ownDrops.has(res)) return;
      rec.aborted = true;
      this.abortedCount++;
      this.emit('progress');
    });
    this.emit('progress');

    if (path.startsWith('/v1/') && this.opts.apiKey && req.headers.authorization !== `Bearer ${this.opts.apiKey}`) {
      return sendJson(res, 401, { error: 'Unauthorized' });
    }
    const route = this.opts.routes?.[`${req.method ?? 'GET'} ${path}`];
    if (route !== undefined) return sendJson(res, 200, typeof route === 'function' ? (route as (b: unknown) => unknown)(body) : route);
    if (req.method === 'GET' && path === '/v1/models') {
      return sendRaw(res, 200, 'application/json', modelsBody(this.engineType, this.opts.models));
    }
    if (req.method === 'POST' && (path === '/v1/chat/completions' || path === '/v1/completions')) {
      return this.inference(res, rec, path === '/v1/completions');
    }
    const id = identityRoute(this.engineType, req.method ?? 'GET', path, {
      version: this.opts.version,
      models: this.modelIds,
      modelsBody: modelsBody(this.engineType, this.opts.models),
      port: this.port,
    });
    sendRaw(res, id.status, id.contentType, id.body);
  }

  private async inference(res: http.ServerResponse, rec: RecordedRequest, completions: boolean): Promise<void> {
    const asked = (rec.body ?? {}) as Record<string, unknown>;
    const own = typeof asked.model === 'string' && this.mode !== 'down' ? this.opts.modelModes?.[asked.model] : undefined;
    const mode = own ?? this.mode;
    if (mode === 'hang' || mode === 'down') return; // never answer; the socket stays open until closed
    if (isError(mode)) {
      return sendJson(res, mode.status, mode.body ?? { error: { message: `test engine error ${mode.status}`, type: 'server_error', code: mode.status } });
    }
    const req = (rec.body ?? {}) as Record<string, unknown>;
    const model = typeof req.model === 'string' ? req.model : '';
    if (this.opts.strictModels && !this.modelIds.includes(model)) {
      return sendJson(res, 404, {
        error: { message: `The model \`${model}\` does not exist.`, type: 'NotFoundError', param: 'model', code: 404 },
      });
    }
    const sm: StreamMode = mode === 'ok' || mode === 'garbage' ? {} : mode;
    const maxTokens = Number(req.max_tokens ?? req.max_completion_tokens ?? Infinity);
    const genN = sm.generate === undefined ? undefined : Math.max(0, Math.min(sm.generate, maxTokens));
    const trace = this.opts.traces?.[model] ?? (completions ? (this.opts.completionsTrace ?? DEFAULT_COMPLETIONS) : (this.opts.chatTrace ?? DEFAULT_CHAT));

    if (req.stream !== true) {
      if (sm.delayMs) await sleep(sm.delayMs);
      if (mode === 'garbage') return sendRaw(res, 200, 'application/json', '<html>not json</html>');
      const summary =
        genN === undefined
          ? summarizeTrace(trace)
          : {
              text: generatedText(genN),
              reasoning: '',
              finishReason: genN < (sm.generate ?? 0) ? 'length' : 'stop',
              usage: { prompt_tokens: this.promptTokens, completion_tokens: genN },
            };
      return sendJson(res, 200, nonStreamBody(summary, model, completions));
    }

    const events: Iterable<Buffer | string> =
      mode === 'garbage'
        ? ['data: <html>Internal error</html>\n\n', 'data: not json at all\n\n', 'data: [DONE]\n\n']
        : genN === undefined
          ? splitEvents(readTrace(trace))
          : generateEvents(genN, genN < (sm.generate ?? 0), model, completions, this.promptTokens, this.opts.tokenIds === true);
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    res.flushHeaders();
    this.activeStreams++;
    try {
      let i = 0;
      let lastWrite: Promise<void> = Promise.resolve();
      for (const ev of events) {
        if (res.destroyed) return;
        if (sm.dropAfterEvents === i) {
          // Crash after the events already written reached the wire.
          this.ownDrops.add(res);
          await lastWrite;
          res.socket?.destroy();
          return;
        }
        if (sm.stallAfterEvents === i) return;
        if (sm.delayMs && i > 0) {
          await sleep(sm.delayMs);
          if (res.destroyed) return;
        }
        i++;
        rec.eventsWritten++;
        this.eventsWritten++;
        let ok: boolean;
        if (sm.dropAfterEvents !== undefined) {
          let flushed!: () => void;
          lastWrite = new Promise<void>((r) => (flushed = r));
          ok = res.write(ev, () => flushed());
        } else {
          ok = res.write(ev);
        }
        if (ok) this.eventsAccepted++;
        this.emit('progress');
        if (!ok) {
          if (this.streamsWaiting++ === 0) this.drainSince = Date.now();
          this.emit('progress');
          await drainOrClose(res);
          this.streamsWaiting--;
          if (res.destroyed) return;
          this.eventsAccepted++;
          this.emit('progress');
        }
      }
      res.end();
    } finally {
      this.activeStreams--;
    }
  }

  private get promptTokens(): number {
    return this.opts.promptTokens ?? 8;
  }
}

function drainOrClose(res: http.ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

function* generateEvents(n: number, cut: boolean, model: string, completions: boolean, promptTokens: number, tokenIds: boolean): Generator<string> {
  const created = Math.floor(Date.now() / 1000);
  const head = completions
    ? { id: 'cmpl-test', object: 'text_completion', created, model }
    : { id: 'chatcmpl-test', object: 'chat.completion.chunk', created, model };
  const line = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
  if (!completions) yield line({ ...head, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }] });
  for (let i = 0; i < n; i++) {
    const text = i === 0 ? 'tok0' : ` tok${i}`;
    const choice: Record<string, unknown> = completions
      ? { index: 0, text, logprobs: null, finish_reason: null }
      : { index: 0, delta: { content: text }, logprobs: null, finish_reason: null };
    if (tokenIds) choice.token_ids = [1000 + i];
    yield line({ ...head, choices: [choice] });
  }
  const finish = cut ? 'length' : 'stop';
  yield line({
    ...head,
    choices: [completions ? { index: 0, text: '', logprobs: null, finish_reason: finish } : { index: 0, delta: {}, logprobs: null, finish_reason: finish }],
  });
  yield line({ ...head, choices: [], usage: { prompt_tokens: promptTokens, completion_tokens: n, total_tokens: promptTokens + n } });
  yield 'data: [DONE]\n\n';
}

interface Summary {
  text: string;
  reasoning: string;
  finishReason?: string;
  usage?: { prompt_tokens: number; completion_tokens: number };
}

function nonStreamBody(s: Summary, model: string, completions: boolean): Record<string, unknown> {
  const created = Math.floor(Date.now() / 1000);
  const usage = s.usage ? { ...s.usage, total_tokens: s.usage.prompt_tokens + s.usage.completion_tokens } : undefined;
  const finish_reason = s.finishReason ?? 'stop';
  if (completions) {
    return {
      id: 'cmpl-test',
      object: 'text_completion',
      created,
      model,
      choices: [{ index: 0, text: s.text, logprobs: null, finish_reason }],
      ...(usage ? { usage } : {}),
    };
  }
  const message: Record<string, unknown> = { role: 'assistant', content: s.text };
  if (s.reasoning) message.reasoning_content = s.reasoning;
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion',
    created,
    model,
    choices: [{ index: 0, message, logprobs: null, finish_reason }],
    ...(usage ? { usage } : {}),
  };
}

function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  sendRaw(res, status, 'application/json', typeof body === 'string' ? body : JSON.stringify(body));
}

function sendRaw(res: http.ServerResponse, status: number, contentType: string, body: string): void {
  res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

// ---- identity endpoints: what each engine answers besides inference -------------------------------

const MODELS_FILE: Partial<Record<EngineType, string>> = {
  vllm: 'vllm-models.json',
  sglang: 'sglang-models.json',
  ollama: 'ollama-models.json',
  llamacpp: 'llamacpp-models.json',
  lmstudio: 'lmstudio-models.json',
  tgi: 'tgi-models.json',
  openai: 'openai-models.json',
};
const OWNED_BY: Partial<Record<EngineType, string>> = {
  vllm: 'vllm',
  sglang: 'sglang',
  ollama: 'library',
  llamacpp: 'llamacpp',
  lmstudio: 'organization_owner',
  openai: 'system',
  jan: 'jan',
};
const VERSION: Partial<Record<EngineType, string>> = {
  vllm: '0.11.0',
  sglang: '0.5.12',
  ollama: '0.12.6',
  llamacpp: 'b6351-5d804a49',
  tgi: '3.1.2-dev0',
};

/** The /v1/models body: the engine's real *-models.json, or a list built from `models`. */
export function modelsBody(type: EngineType, models?: string[]): string {
  if (models) {
    const data = models.map((id) => ({ id, object: 'model', created: 1700000000, owned_by: type === 'tgi' ? id : (OWNED_BY[type] ?? 'owner') }));
    return JSON.stringify({ object: 'list', data });
  }
  const file = MODELS_FILE[type];
  return file ? readTrace(file).toString('utf8') : '{"object":"list","data":[]}';
}

export function modelIds(type: EngineType, models?: string[]): string[] {
  const parsed = JSON.parse(modelsBody(type, models)) as { data: { id: string }[] };
  return parsed.data.map((m) => m.id);
}

interface Routed {
  status: number;
  contentType: string;
  body: string;
}

function identityRoute(type: EngineType, method: string, path: string, ctx: { version?: string; models: string[]; modelsBody: string; port: number }): Routed {
  const json = (body: unknown, status = 200): Routed => ({ status, contentType: 'application/json', body: JSON.stringify(body) });
  const text = (body: string, status = 200): Routed => ({ status, contentType: 'text/plain; charset=utf-8', body });
  const version = ctx.version ?? VERSION[type] ?? '';
  const first = ctx.models[0] ?? 'model';
  const get = method === 'GET' || method === 'HEAD';
  switch (type) {
    case 'vllm':
      if (get && path === '/version') return json({ version });
      if (get && path === '/health') return text('');
      return json({ detail: 'Not Found' }, 404);
    case 'sglang': {
      const args = { model_path: first, tokenizer_path: first, served_model_name: first, host: '127.0.0.1', port: ctx.port, tp_size: 1, dp_size: 1 };
      if (get && path === '/get_server_args') return json(args);
      if (get && path === '/get_server_info') return json({ ...args, version });
      if (get && path === '/get_model_info') return json({ model_path: first, tokenizer_path: first, is_generation: true });
      if (get && path === '/health') return text('');
      return json({ detail: 'Not Found' }, 404);
    }
    case 'ollama':
      if (get && path === '/') return text('Ollama is running');
      if (get && path === '/api/version') return json({ version });
      if (get && path === '/api/tags') {
        const models = ctx.models.map((name) => ({
          name,
          model: name,
          modified_at: '2025-10-01T12:00:00.000000000Z',
          size: 3338801804,
          digest: 'a2af6cc3eb7fa8be8504abaf9b04e88f17a119ec3f04a3addf55f92841195f5a',
          details: { parent_model: '', format: 'gguf', family: 'gemma3', families: ['gemma3'], parameter_size: '4.3B', quantization_level: 'Q4_K_M' },
        }));
        return json({ models });
      }
      return text('404 page not found', 404);
    case 'llamacpp':
      if (get && (path === '/health' || path === '/v1/health')) return json({ status: 'ok' });
      // llama-server (b10470, test/fixtures/llama.cpp/api-tags.json) answers /api/tags 404 like any unknown route.
      if (get && path === '/props') {
        return json({
          default_generation_settings: { n_ctx: 16384 },
          total_slots: 1,
          model_path: `/models/${first}`,
          build_info: version,
          modalities: { vision: false },
        });
      }
      return json({ error: { code: 404, message: 'File Not Found', type: 'not_found_error' } }, 404);
    case 'lmstudio':
      if (get && path === '/api/v0/models') {
        const data = ctx.models.map((id) => ({
          id,
          object: 'model',
          type: 'llm',
          publisher: 'lmstudio-community',
          arch: 'gemma2',
          compatibility_type: 'gguf',
          quantization: 'Q4_K_M',
          state: 'loaded',
          max_context_length: 8192,
        }));
        return json({ object: 'list', data });
      }
      // LM Studio has no health route and answers unknown paths with 200.
      return json({ error: `Unexpected endpoint or method. (${method} ${path}). Returning 200 anyway` });
    case 'tgi':
      if (get && path === '/health') return text('');
      if (get && path === '/info') {
        return json({
          model_id: first,
          model_sha: null,
          model_pipeline_tag: 'text-generation',
          max_concurrent_requests: 128,
          max_input_tokens: 4095,
          max_total_tokens: 4096,
          router: 'text-generation-router',
          version,
          sha: null,
          docker_label: null,
        });
      }
      return text('', 404);
    default:
      return json({ error: { message: `Unknown request URL: ${method} ${path}`, type: 'invalid_request_error', code: 'unknown_url' } }, 404);
  }
}

/** Start a test engine on 127.0.0.1 (port 0 unless opts.port). Close it in afterEach. */
export async function startTestEngine(opts: TestEngineOptions = {}): Promise<TestEngine> {
  const engine = new TestEngine(opts);
  await engine.listen();
  return engine;
}

export { generatedText };
