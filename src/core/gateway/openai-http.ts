// The ordinary OpenAI-style HTTP endpoints for clients that do not speak WebSocket: GET /v1/models and
// POST /v1/chat/completions (SSE when stream is true, one JSON answer otherwise). Same keys, same
// per-key limits and the same scheduler as the WebSocket dialects.
import crypto from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import type { Logger } from '../base/log';
import { openAiType, resultError } from './errors';
import type { KeyLimits } from './limits';
import { retryAfterSeconds, type LimitCode } from './limits';
import type { ResolvedGatewayOptions } from './options';
import { keyRefusalCode, presentedKey, type KeyRefusalCode } from './auth';
import type { KeyIdentity } from './keys';
import { chatMessageSchema, describeIssues, samplingParamsSchema } from './request-schema';
import { JSON_LIMITS, readJson } from '../http/bounded-json';

const chatBodySchema = z.looseObject({
  model: z.string().min(1).max(256),
  messages: z.array(chatMessageSchema).min(1).max(4096),
  stream: z.boolean().optional(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullable().optional(),
});

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: string | null = null,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function errorBody(status: number, message: string, code: string | null): unknown {
  return { error: { message, type: openAiType(status), param: null, code } };
}

async function readBody(req: IncomingMessage, limit: number): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new HttpError(413, `The request body is larger than ${limit} bytes.`, 'request_too_large');
    parts.push(chunk as Buffer);
  }
  return Buffer.concat(parts).toString('utf8');
}

interface Running {
  keyId: string;
  ac: AbortController;
  revoked: boolean;
}

/** The OpenAI error body's `code` for each per-key limit (OpenAI's own name for the per-minute one). */
const HTTP_LIMIT_CODES: Record<LimitCode, string> = { per_minute: 'rate_limit_exceeded', concurrent: 'concurrent_limit_exceeded' };

const REVOKED = 'The API key of this request was revoked. Create a new key with `swan-provider keys create --name NAME` or in the console settings.';

export class OpenAiHttp {
  private readonly log: Logger;
  private readonly running = new Set<Running>();

  constructor(
    private readonly o: ResolvedGatewayOptions,
    private readonly limits: KeyLimits,
  ) {
    this.log = o.log.child('http');
  }

  /** Stops the requests of revoked keys (the gateway polls this). */
  revoked(isValid: (keyId: string) => boolean): void {
    for (const r of this.running) {
      if (r.revoked || isValid(r.keyId)) continue;
      r.revoked = true;
      r.ac.abort(new Error('the API key was revoked'));
    }
  }

  async handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    try {
      await this.route(req, res, url);
    } catch (e) {
      const err = e instanceof HttpError ? e : new HttpError(500, `The gateway failed: ${(e as Error).message}`, 'internal_error');
      if (!(e instanceof HttpError)) this.log.error(`${req.method} ${url.pathname} failed: ${(e as Error).stack ?? e}`);
      if (res.headersSent) {
        res.end();
        return;
      }
      sendJson(res, err.status, errorBody(err.status, err.message, err.code), err.headers);
    }
  }

  private async route(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const path = url.pathname.replace(/\/+$/, '') || '/';
    if (req.method === 'OPTIONS') {
      res.writeHead(204);
      res.end();
      return;
    }
    if (path === '/' && req.method === 'GET') {
      sendJson(res, 200, {
        name: 'Swan Provider local gateway',
        endpoints: { stream: '/v1/stream (WebSocket, stream-v1)', relay: '/v1/ws (WebSocket)', models: '/v1/models', chat: '/v1/chat/completions' },
      });
      return;
    }
    if (path === '/v1/models' || path.startsWith('/v1/models/')) {
      if (req.method !== 'GET') throw new HttpError(405, `${req.method} is not allowed on ${path}; use GET.`, 'method_not_allowed');
      this.auth(req, url);
      const created = Math.floor(Date.now() / 1000);
      const data = this.o.models().map((id) => ({ id, object: 'model', created, owned_by: 'swan-provider' }));
      if (path === '/v1/models') return sendJson(res, 200, { object: 'list', data });
      const id = decodeURIComponent(path.slice('/v1/models/'.length));
      const one = data.find((m) => m.id === id);
      if (!one) throw new HttpError(404, `Model "${id}" is not served by this provider.`, 'model_not_found');
      return sendJson(res, 200, one);
    }
    if (path === '/v1/chat/completions') {
      if (req.method !== 'POST') throw new HttpError(405, `${req.method} is not allowed on ${path}; use POST.`, 'method_not_allowed');
      const who = this.auth(req, url);
      return this.chat(req, res, who);
    }
    throw new HttpError(
      404,
      `No route ${req.method} ${path}. This gateway serves GET /v1/models, POST /v1/chat/completions, and WebSockets at /v1/stream and /v1/ws.`,
      'not_found',
    );
  }

  private auth(req: IncomingMessage, url: URL): KeyIdentity {
    const key = presentedKey(req, url);
    const who = this.o.keys.identify(key);
    if (!who) {
      const why = key === undefined ? 'No API key: send `Authorization: Bearer KEY`.' : 'The API key is not valid (unknown or revoked).';
      throw new HttpError(401, `${why} Create a key with \`swan-provider keys create --name NAME\` or in the console settings.`, keyRefusalCode(key));
    }
    return who;
  }

  private async chat(req: IncomingMessage, res: ServerResponse, who: KeyIdentity): Promise<void> {
    const keyName = who.name;
    const raw = await readBody(req, this.o.maxMessageBytes);
    const read = readJson(raw, { ...JSON_LIMITS.gateway, maxBytes: this.o.maxMessageBytes });
    if (!read.ok) {
      if (read.code === 'not_json') throw new HttpError(400, `The body is ${read.message}.`, 'invalid_json');
      throw new HttpError(
        read.code === 'too_large' ? 413 : 400,
        `The body was refused unread: ${read.message}.`,
        read.code === 'too_large' ? 'request_too_large' : `json_${read.code}`,
      );
    }
    const json = read.value;
    const p = chatBodySchema.safeParse(json);
    if (!p.success) throw new HttpError(400, describeIssues(p.error), 'invalid_request');
    // Only allow-listed fields reach the engine, as on the WebSocket dialects (a typo is reported, and a
    // client cannot pass engine-specific knobs such as chat templates or grammars through the gateway).
    const { model: _m, messages: _ms, stream: _s, stream_options: _so, ...others } = p.data;
    const sampling = samplingParamsSchema.safeParse(others);
    if (!sampling.success) throw new HttpError(400, describeIssues(sampling.error), 'invalid_request');
    const body = {
      ...sampling.data,
      model: p.data.model,
      messages: p.data.messages,
      ...(p.data.stream !== undefined ? { stream: p.data.stream } : {}),
      ...(p.data.stream_options?.include_usage !== undefined ? { stream_options: { include_usage: p.data.stream_options.include_usage } } : {}),
    };
    const models = this.o.models();
    if (!models.includes(body.model)) {
      throw new HttpError(
        404,
        `Model "${body.model}" is not served by this provider. ${models.length ? `Models served here: ${models.join(', ')}.` : 'No model is enabled right now.'}`,
        'model_not_found',
      );
    }
    const admission = this.limits.acquire(keyName);
    const q = this.limits.quota(keyName);
    const rateHeaders = { 'x-ratelimit-limit-requests': String(q.limit), 'x-ratelimit-remaining-requests': String(q.remaining) };
    if (!admission.ok) {
      throw new HttpError(429, admission.message, HTTP_LIMIT_CODES[admission.code], {
        ...rateHeaders,
        'retry-after': String(retryAfterSeconds(admission.retryAfterMs)),
      });
    }
    const id = `${keyName}/${crypto.randomUUID()}`;
    const ac = new AbortController();
    const running: Running = { keyId: who.id, ac, revoked: false };
    this.running.add(running);
    res.on('close', () => {
      if (!res.writableFinished) ac.abort(new Error('the client closed the connection'));
    });
    const stream = body.stream === true;
    const wantsUsage = body.stream_options?.include_usage === true;
    const headers = { ...rateHeaders, 'x-request-id': id };
    /** Writes one event; a promise only when the socket is backed up (no await per chunk otherwise). */
    const write = (data: Record<string, unknown>): Promise<void> | undefined => {
      if (!res.headersSent)
        res.writeHead(200, { ...headers, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
      return res.write(`data: ${JSON.stringify(data)}\n\n`) ? undefined : drained(res);
    };
    // The agent always asks the engine for usage. A client that did not ask gets no usage chunk, but
    // keeps what the engine would have sent it: llama.cpp moves `timings` from the finish chunk onto the
    // usage chunk when usage is on, so the finish chunk waits for it and takes its extras back.
    let held: Record<string, unknown> | undefined;
    const flush = (): Promise<void> | undefined => {
      const h = held;
      held = undefined;
      return h && !res.destroyed ? write(h) : undefined;
    };
    try {
      const r = await this.o.runner.run(
        { id, purpose: 'gateway', operation: 'chat/completions', model: body.model, body: body as Record<string, unknown>, stream, signal: ac.signal },
        {
          chunk: (ev) => {
            if (ev.emptyChoices) {
              if (wantsUsage && ev.usage) return write(ev.data);
              if (held) for (const [k, v] of Object.entries(ev.data)) if (k !== 'usage' && k !== 'choices' && !(k in held)) held[k] = v;
              return undefined;
            }
            const backedUp = held ? flush() : undefined;
            if (!wantsUsage && ev.finishReason) {
              held = ev.data;
              return backedUp;
            }
            return backedUp ? backedUp.then(() => write(ev.data)) : write(ev.data);
          },
        },
      );
      if (held) await flush();
      if (r.status === 'ok') {
        if (!stream) return sendJson(res, 200, r.response, headers);
        if (!res.headersSent) res.writeHead(200, { ...headers, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
        res.end('data: [DONE]\n\n');
        return;
      }
      if (running.revoked) {
        if (!res.headersSent) throw new HttpError(401, REVOKED, 'key_revoked' satisfies KeyRefusalCode);
        res.end(`data: ${JSON.stringify(errorBody(401, REVOKED, 'key_revoked' satisfies KeyRefusalCode))}\n\ndata: [DONE]\n\n`);
        return;
      }
      if (ac.signal.aborted) return void res.end();
      const e = resultError(r);
      const extra: Record<string, string> = e.retryAfterMs !== undefined ? { 'retry-after': String(retryAfterSeconds(e.retryAfterMs)) } : {};
      if (res.headersSent) {
        // Mid-stream: the status is already 200; OpenAI-style servers send the error as one more event.
        res.end(`data: ${JSON.stringify(errorBody(e.status, e.message, e.code))}\n\ndata: [DONE]\n\n`);
        return;
      }
      throw new HttpError(e.status, e.message, e.code, { ...headers, ...extra });
    } finally {
      admission.release();
      this.running.delete(running);
    }
  }
}

function drained(res: ServerResponse): Promise<void> {
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
