// /v1/ws: seed 002's relay dialect (switchAILocal-style). chat.message -> chat.chunk {content, done,
// request_id} … (stream) or chat.complete {content, usage} (no stream); ping -> pong {timestamp};
// cancel {request_id}; error {code: auth_error | rate_limit | provider_error | invalid_request, message}.
// No acks in this dialect: the engine is paced by the socket's own send buffer instead.
import crypto from 'node:crypto';
import { z } from 'zod';
import type { WebSocket } from 'ws';
import type { Logger } from '../base/log';
import { relayCode, resultError } from './errors';
import { retryAfterSeconds, type KeyLimits } from './limits';
import { keyRefusalCode, type KeyRefusalCode } from './auth';
import type { ResolvedGatewayOptions } from './options';
import { chatMessageSchema, describeIssues, parseClientMessage, requestIdOf, requestIdSchema, SAMPLING_KEYS, samplingParamsSchema } from './request-schema';
import { CLOSE, keepAlive, sendJson } from './ws-util';
import { refusalLog } from './refusal-log';

/** Unsent bytes beyond which reading from the engine waits for the socket to drain. */
const HIGH_WATER = 1024 * 1024;
export const ANONYMOUS_KEY = 'websocket_auth-off';

const chatSchema = z.looseObject({
  type: z.literal('chat.message'),
  model: z.string().min(1).max(256),
  messages: z.array(chatMessageSchema).min(1).max(4096),
  stream: z.boolean().optional(),
  request_id: requestIdSchema.optional(),
});
const cancelSchema = z.object({ type: z.literal('cancel'), request_id: requestIdSchema });
const TYPES = ['chat.message', 'ping', 'cancel'];

interface Conn {
  id: number;
  ws: WebSocket;
  keyName: string;
  /** The key's id (hash); undefined when websocket_auth is off and no key was given. */
  keyId?: string;
  requests: Map<string, AbortController>;
  idle?: NodeJS.Timeout;
  stopKeepAlive?: () => void;
}

function contentOf(response: unknown): string {
  const r = response as { choices?: Array<{ message?: { content?: unknown } }> } | undefined;
  const c = r?.choices?.[0]?.message?.content;
  return typeof c === 'string' ? c : '';
}

export class RelayService {
  private readonly conns = new Set<Conn>();
  private nextId = 1;
  private readonly log: Logger;

  constructor(
    private readonly o: ResolvedGatewayOptions,
    private readonly limits: KeyLimits,
  ) {
    this.log = o.log.child('relay');
  }

  /** A new WebSocket on /v1/ws. `authOff`: websocket_auth is false (loopback only) and no key is needed. */
  handle(ws: WebSocket, key: string | undefined, authOff: boolean): void {
    ws.on('error', (e) => this.log.debug(`relay connection: ${e.message}`));
    const who = key !== undefined ? this.o.keys.identify(key) : undefined;
    const keyName = who?.name;
    if (!keyName && !(authOff && key === undefined)) {
      const message =
        key === undefined
          ? "Missing API key. Connect with ws://HOST/v1/ws?apiKey=KEY or the subprotocols ['access_token', KEY]; create a key with `swan-provider keys create --name NAME`."
          : 'The API key is not valid (unknown or revoked). Create one with `swan-provider keys create --name NAME` or in the console settings.';
      refusalLog(this.log).refused('info', `relay connection refused: ${key === undefined ? 'no API key' : 'unknown or revoked API key'}`);
      sendJson(ws, { type: 'error', code: 'auth_error', reason: keyRefusalCode(key), message });
      ws.close(CLOSE.policy, 'auth_error');
      return;
    }
    const c: Conn = { id: this.nextId++, ws, keyName: keyName ?? ANONYMOUS_KEY, ...(who ? { keyId: who.id } : {}), requests: new Map() };
    this.conns.add(c);
    c.stopKeepAlive = keepAlive(ws, this.o.heartbeatMs);
    this.touch(c);
    ws.on('close', () => {
      this.conns.delete(c);
      c.stopKeepAlive?.();
      if (c.idle) clearTimeout(c.idle);
      for (const ac of c.requests.values()) ac.abort(new Error('the client disconnected'));
    });
    ws.on('message', (data, isBinary) => {
      this.touch(c);
      try {
        this.message(c, parseClientMessage(data as Buffer, isBinary));
      } catch (e) {
        this.log.error(`relay message handling failed: ${(e as Error).stack ?? e}`);
        sendJson(ws, { type: 'error', code: 'provider_error', message: `The gateway failed to handle that message: ${(e as Error).message}` });
      }
    });
  }

  /** Ends every connection of a revoked key and stops its requests (the gateway polls this). */
  revoked(isValid: (keyId: string) => boolean): void {
    for (const c of this.conns) {
      if (c.keyId === undefined || isValid(c.keyId)) continue;
      this.log.info(`relay connection ${c.id}: its API key was revoked; closing it`);
      for (const ac of c.requests.values()) ac.abort(new Error('the API key was revoked'));
      sendJson(c.ws, {
        type: 'error',
        code: 'auth_error',
        reason: 'key_revoked' satisfies KeyRefusalCode,
        message: "This connection's API key was revoked. Create a new key with `swan-provider keys create --name NAME` or in the console settings.",
      });
      c.keyId = undefined;
      c.ws.close(CLOSE.policy, 'auth_error');
    }
  }

  close(): void {
    for (const c of this.conns) {
      c.stopKeepAlive?.();
      if (c.idle) clearTimeout(c.idle);
      for (const ac of c.requests.values()) ac.abort(new Error('the gateway is shutting down'));
      c.ws.terminate();
    }
    this.conns.clear();
  }

  /** Seed 002's websocket_timeout: a connection with no message and no running request is closed. */
  private touch(c: Conn): void {
    if (c.idle) clearTimeout(c.idle);
    c.idle = setTimeout(() => {
      if (c.requests.size > 0) return this.touch(c);
      const secs = Math.round(this.o.idleTimeoutMs / 1000);
      this.log.debug(`relay connection idle for ${secs} s; closing it`);
      c.ws.close(CLOSE.normal, `idle for ${secs} s; send {"type":"ping"} to keep the connection open`);
    }, this.o.idleTimeoutMs);
    c.idle.unref();
  }

  private message(c: Conn, parsed: ReturnType<typeof parseClientMessage>): void {
    const err = (code: string, message: string, requestId?: string) =>
      sendJson(c.ws, { type: 'error', code, message, ...(requestId ? { request_id: requestId } : {}) });
    if (!parsed.ok) return err('invalid_request', parsed.message);
    const m = parsed.value;
    const rid = requestIdOf(m);
    switch (m.type) {
      case 'ping':
        return sendJson(c.ws, { type: 'pong', timestamp: Date.now() });
      case 'cancel': {
        const x = cancelSchema.safeParse(m);
        if (!x.success) return err('invalid_request', `cancel: ${describeIssues(x.error)}`, rid);
        const ac = c.requests.get(x.data.request_id);
        if (!ac) return err('invalid_request', `No running request with request_id ${x.data.request_id} on this connection.`, x.data.request_id);
        ac.abort(new Error('cancelled by the client'));
        return;
      }
      case 'chat.message': {
        const p = chatSchema.safeParse(m);
        if (!p.success) return err('invalid_request', `chat.message: ${describeIssues(p.error)}`, rid);
        const picked = Object.fromEntries(SAMPLING_KEYS.filter((k) => m[k] !== undefined).map((k) => [k, m[k]]));
        const params = samplingParamsSchema.safeParse(picked);
        if (!params.success) return err('invalid_request', `chat.message: ${describeIssues(params.error)}`, rid);
        return this.chat(c, p.data, params.data);
      }
      default:
        return err('invalid_request', `Unknown message type "${String(m.type).slice(0, 64)}". This endpoint understands: ${TYPES.join(', ')}.`, rid);
    }
  }

  private chat(c: Conn, m: z.infer<typeof chatSchema>, params: Record<string, unknown>): void {
    const requestId = m.request_id ?? crypto.randomUUID();
    const err = (code: string, message: string, extra: Record<string, unknown> = {}) =>
      sendJson(c.ws, { type: 'error', code, message, request_id: requestId, ...extra });
    if (c.requests.has(requestId)) return err('invalid_request', `request_id ${requestId} is already running on this connection; use a new one.`);
    const models = this.o.models();
    if (!models.includes(m.model)) {
      return err(
        'invalid_request',
        `Model "${m.model}" is not served by this provider. ${models.length > 0 ? `Models served here: ${models.join(', ')}.` : 'No model is enabled right now.'}`,
      );
    }
    const admission = this.limits.acquire(c.keyName);
    if (!admission.ok) return err('rate_limit', admission.message, { reason: admission.code, retry_after: retryAfterSeconds(admission.retryAfterMs) });
    const ac = new AbortController();
    c.requests.set(requestId, ac);
    const stream = m.stream === true;
    const body: Record<string, unknown> = { ...params, model: m.model, messages: m.messages, stream };
    const ws = c.ws;
    this.o.runner
      .run(
        // Relay request ids are only unique per connection: the console id says which one.
        { id: `${c.keyName}/ws${c.id}/${requestId}`, purpose: 'gateway', operation: 'chat/completions', model: m.model, body, stream, signal: ac.signal },
        {
          chunk: async (ev) => {
            if (!stream || (!ev.text && !ev.reasoning)) return;
            if (ws.readyState !== ws.OPEN) return;
            const text = JSON.stringify({
              type: 'chat.chunk',
              request_id: requestId,
              content: ev.text,
              done: false,
              ...(ev.reasoning ? { reasoning: ev.reasoning } : {}),
            });
            // The callback runs once this frame is handed to the OS: waiting for it paces the engine to the client.
            const flushed = new Promise<void>((resolve) => ws.send(text, () => resolve()));
            if (ws.bufferedAmount > HIGH_WATER) await flushed;
          },
        },
      )
      .then(
        (r) => {
          const usage = { prompt_tokens: r.tokensIn, completion_tokens: r.tokensOut, total_tokens: r.tokensIn + r.tokensOut };
          if (r.status === 'ok') {
            if (stream) sendJson(ws, { type: 'chat.chunk', request_id: requestId, content: '', done: true, finish_reason: r.finishReason ?? 'stop', usage });
            else sendJson(ws, { type: 'chat.complete', request_id: requestId, content: contentOf(r.response), usage, finish_reason: r.finishReason ?? 'stop' });
            return;
          }
          if (r.status === 'cancelled' && ac.signal.aborted) {
            const done = stream ? { type: 'chat.chunk', content: '', done: true } : { type: 'chat.complete', content: '' };
            sendJson(ws, { ...done, request_id: requestId, finish_reason: 'cancelled' });
            return;
          }
          const e = resultError(r);
          err(relayCode(e), e.message, e.retryAfterMs !== undefined ? { retry_after: retryAfterSeconds(e.retryAfterMs) } : {});
        },
        (e: unknown) => {
          this.log.error(`relay request ${requestId} failed inside the gateway: ${(e as Error).message}`);
          err('provider_error', `The gateway failed: ${(e as Error).message}`);
        },
      )
      .finally(() => {
        admission.release();
        c.requests.delete(requestId);
      });
  }
}
