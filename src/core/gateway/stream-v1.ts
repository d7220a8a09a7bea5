// /v1/stream: the stream-v1 protocol (seed 001 + seed 003 events) over one WebSocket per client.
// auth -> start / ack / cancel / describe_fleet in; accepted / started / delta / complete / error /
// heartbeat / quota / fleet out. Requests outlive connections: a client that drops reconnects and sends
// start {resume_token} (or the same start again) and gets every message after the one it last had.
import type { WebSocket } from 'ws';
import type { Logger } from '../base/log';
import type { KeyLimits } from './limits';
import { retryAfterSeconds } from './limits';
import { keyRefusalCode, type KeyRefusalCode } from './auth';
import type { ResolvedGatewayOptions } from './options';
import { describeIssues, parseClientMessage, requestIdOf } from './request-schema';
import type { ResumeRefusalReason, ResumeTokens } from './resume-token';
import { StreamRegistry } from './stream-registry';
import type { StreamConn, StreamState } from './stream-state';
import { ackSchema, authSchema, cancelSchema, CLIENT_TYPES, compatibility, describeFleetSchema, startSchema, type StartMessage } from './stream-v1-messages';
import { internalId, resumeToken, runStream, type RunDeps } from './stream-v1-run';
import { CLOSE, keepAlive, sendJson } from './ws-util';
import { refusalLog } from './refusal-log';

const NEED_KEY = 'Create a key with `swan-provider keys create --name NAME` (or in the console settings).';

class Connection implements StreamConn {
  readonly attached = new Set<StreamState>();
  keyName?: string;
  /** The key's id (its hash): streams, resume tokens and revocation go by it. */
  keyId?: string;
  stopKeepAlive?: () => void;
  authTimer?: NodeJS.Timeout;
  /** Refused (no or a bad key): closing, and nothing it sends is read or answered any more. */
  refused = false;

  constructor(
    readonly id: number,
    readonly ws: WebSocket,
  ) {}

  send(text: string): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(text);
  }

  json(msg: Record<string, unknown>): void {
    sendJson(this.ws, msg);
  }

  error(code: string, kind: string, message: string, extra: Record<string, unknown> = {}): void {
    this.json({ type: 'error', ...extra, code, kind, message });
  }
}

export class StreamV1Service {
  readonly registry: StreamRegistry;
  private readonly conns = new Map<number, Connection>();
  private nextId = 1;
  private readonly log: Logger;
  private readonly run: RunDeps;

  constructor(
    private readonly o: ResolvedGatewayOptions,
    private readonly tokens: ResumeTokens,
    private readonly limits: KeyLimits,
  ) {
    this.log = o.log.child('stream');
    this.registry = new StreamRegistry({
      limits: { windowBytes: o.window.bytes, windowMessages: o.window.messages, retentionBytes: o.retentionBytes, ackTimeoutMs: o.ackTimeoutMs },
      ttlMs: o.resumeTtlMs,
      maxRetainedBytes: o.maxRetainedBytes,
      log: this.log,
      onAckTimeout: (s, c) => this.ackTimeout(s, c),
    });
    this.run = { runner: o.runner, tokens, registry: this.registry, log: this.log, resumeTtlMs: o.resumeTtlMs };
  }

  /** A new WebSocket on /v1/stream; `key` is what the handshake carried (query, bearer or subprotocol). */
  handle(ws: WebSocket, key: string | undefined): void {
    const c = new Connection(this.nextId++, ws);
    this.conns.set(c.id, c);
    ws.on('error', (e) => this.log.debug(`stream connection ${c.id}: ${e.message}`));
    ws.on('close', () => this.closed(c));
    ws.on('message', (data, isBinary) => {
      if (c.refused) return;
      try {
        this.message(c, parseClientMessage(data as Buffer, isBinary));
      } catch (e) {
        this.log.error(`stream connection ${c.id}: message handling failed: ${(e as Error).stack ?? e}`);
        c.error('internal_error', 'internal', `The gateway failed to handle that message: ${(e as Error).message}`);
      }
    });
    c.stopKeepAlive = keepAlive(ws, this.o.heartbeatMs, () => {
      c.json({ type: 'heartbeat', ts: Date.now() });
      if (c.keyName) c.json({ type: 'quota', ...this.limits.quota(c.keyName) });
    });
    if (key !== undefined) {
      this.authenticate(c, key);
    } else {
      c.authTimer = setTimeout(() => {
        this.refuse(
          c,
          `No credentials within ${Math.round(this.o.authTimeoutMs / 1000)} s. Send {"type":"auth","token":"<key>"} first, or connect with ?api_key=<key>. ${NEED_KEY}`,
          'key_missing',
          'authentication required',
        );
      }, this.o.authTimeoutMs);
      c.authTimer.unref();
    }
  }

  close(): void {
    for (const c of this.conns.values()) {
      this.clearTimers(c);
      c.ws.terminate();
    }
    this.conns.clear();
    this.registry.close();
  }

  /** Ends every connection and request of keys that were revoked (the gateway polls this). */
  revoked(isValid: (keyId: string) => boolean): void {
    for (const c of this.conns.values()) {
      if (!c.keyId || isValid(c.keyId)) continue;
      this.log.info(`stream connection ${c.id}: its API key was revoked; closing it`);
      c.error('unauthorized', 'rejected', `This connection's API key was revoked. ${NEED_KEY}`, { reason: 'key_revoked' satisfies KeyRefusalCode });
      c.keyId = undefined;
      c.keyName = undefined;
      c.ws.close(CLOSE.policy, 'API key revoked');
    }
    this.registry.dropRevoked(isValid);
  }

  private authenticate(c: Connection, key: string): boolean {
    const who = this.o.keys.identify(key);
    const name = who?.name;
    if (!who || !name) {
      refusalLog(this.log).refused('info', `stream connection ${c.id}: refused an unknown or revoked API key`);
      this.refuse(c, `The API key is not valid (unknown or revoked). ${NEED_KEY}`, keyRefusalCode(key), 'invalid API key');
      return false;
    }
    c.keyName = name;
    c.keyId = who.id;
    if (c.authTimer) clearTimeout(c.authTimer);
    c.json({ type: 'quota', ...this.limits.quota(name) });
    return true;
  }

  /**
   * Before a key is known, a connection gets one answer and is closed: whatever it sends first that is not a
   * valid auth, a bad key, or no auth in time. Answering every frame of an unauthenticated client (it once
   * did) let anyone who can reach the port make the gateway write twenty times what it read, without end.
   */
  private refuse(c: Connection, message: string, reason: KeyRefusalCode, closeReason: string, extra: Record<string, unknown> = {}): void {
    if (c.refused) return;
    c.refused = true;
    this.clearTimers(c);
    c.error('unauthorized', 'rejected', message, { ...extra, reason });
    c.ws.close(CLOSE.policy, closeReason);
    // A peer that does not finish the close handshake is cut off.
    setTimeout(() => c.ws.terminate(), 2000).unref();
  }

  private message(c: Connection, parsed: ReturnType<typeof parseClientMessage>): void {
    if (!c.keyName && !(parsed.ok && parsed.value.type === 'auth')) {
      const at = parsed.ok && requestIdOf(parsed.value) ? { request_id: requestIdOf(parsed.value) } : {};
      const why = parsed.ok ? '' : ` (that message could not be read: ${parsed.message})`;
      return this.refuse(
        c,
        `Authenticate first: send {"type":"auth","token":"<key>"} or connect with ?api_key=<key>${why}. ${NEED_KEY}`,
        'key_missing',
        'authentication required',
        at,
      );
    }
    if (!parsed.ok) return c.error('invalid_message', 'invalid', parsed.message);
    const m = parsed.value;
    const rid = requestIdOf(m);
    const at = rid ? { request_id: rid } : {};
    if (!(CLIENT_TYPES as readonly string[]).includes(m.type as string)) {
      return c.error(
        'unknown_type',
        'invalid',
        `Unknown message type "${String(m.type).slice(0, 64)}". stream-v1 clients send: ${CLIENT_TYPES.join(', ')}.`,
        at,
      );
    }
    if (m.type === 'auth') {
      if (c.keyName) return c.error('invalid_request', 'invalid', 'Already authenticated on this connection.');
      const a = authSchema.safeParse(m);
      if (!a.success) return this.refuse(c, `auth: ${describeIssues(a.error)}. ${NEED_KEY}`, 'key_missing', 'authentication required');
      this.authenticate(c, (a.data.token ?? a.data.api_key) as string);
      return;
    }
    if (!c.keyName)
      return this.refuse(
        c,
        `Authenticate first: send {"type":"auth","token":"<key>"} or connect with ?api_key=<key>. ${NEED_KEY}`,
        'key_missing',
        'authentication required',
        at,
      );
    // A key revoked while connected stops working for new work at once.
    if (m.type === 'start' && !this.o.keys.isValid(c.keyId as string)) {
      c.error('unauthorized', 'rejected', `This connection's API key was revoked. ${NEED_KEY}`, { ...at, reason: 'key_revoked' satisfies KeyRefusalCode });
      c.ws.close(CLOSE.policy, 'API key revoked');
      return;
    }
    switch (m.type) {
      case 'start': {
        const s = startSchema.safeParse(m);
        if (!s.success) return c.error('invalid_request', 'invalid', `start: ${describeIssues(s.error)}`, at);
        return this.start(c, s.data);
      }
      case 'ack': {
        const a = ackSchema.safeParse(m);
        if (!a.success) return c.error('invalid_request', 'invalid', `ack: ${describeIssues(a.error)}`, at);
        return this.ack(c, a.data.request_id, a.data.seq);
      }
      case 'cancel': {
        const x = cancelSchema.safeParse(m);
        if (!x.success) return c.error('invalid_request', 'invalid', `cancel: ${describeIssues(x.error)}`, at);
        return this.cancel(c, x.data.request_id);
      }
      case 'describe_fleet': {
        const d = describeFleetSchema.safeParse(m);
        if (!d.success) return c.error('invalid_request', 'invalid', `describe_fleet: ${describeIssues(d.error)}`, at);
        try {
          c.json({ type: 'fleet', ...(d.data.request_id ? { request_id: d.data.request_id } : {}), ...this.o.fleet() });
        } catch (e) {
          c.error('internal_error', 'internal', `Could not describe the fleet: ${(e as Error).message}`, at);
        }
        return;
      }
    }
  }

  private start(c: Connection, m: StartMessage): void {
    const keyName = c.keyName as string;
    const keyId = c.keyId as string;
    if (m.resume_token) return this.resume(c, keyId, m);
    const requestId = m.request_id as string;
    const model = m.model as string;
    const existing = this.registry.get(keyId, requestId);
    if (existing) return this.reattach(c, existing, model);

    const models = this.o.models();
    if (!models.includes(model)) {
      const list = models.length > 0 ? `Models served here: ${models.join(', ')}.` : 'No model is enabled right now; enable one in the console.';
      return c.error('model_not_loaded', 'model_not_loaded', `Model "${model}" is not served by this provider. ${list}`, { request_id: requestId });
    }
    const admission = this.limits.acquire(keyName);
    if (!admission.ok) {
      c.error('rate_limited', 'rejected', admission.message, {
        request_id: requestId,
        reason: admission.code,
        retry_after: retryAfterSeconds(admission.retryAfterMs),
        retry_after_ms: admission.retryAfterMs,
      });
      c.json({ type: 'quota', ...this.limits.quota(keyName) });
      return;
    }
    const state = this.registry.create({ name: keyName, id: keyId }, requestId, model);
    this.attach(c, state, 0);
    c.json({
      type: 'started',
      request_id: requestId,
      resume_token: resumeToken(this.run, state, 0),
      initial_metadata: { model, created: Math.floor(Date.now() / 1000), console_request_id: internalId(state) },
      compatibility: compatibility(this.o.window, this.o.resumeTtlMs),
    });
    c.json({ type: 'quota', ...this.limits.quota(keyName) });
    const body: Record<string, unknown> = { ...(m.params ?? {}), model, ...(m.messages ? { messages: m.messages } : { prompt: m.prompt }), stream: true };
    this.log.debug(`stream ${requestId} started for ${model} (key ${keyName})`, { requestId: internalId(state) });
    runStream(this.run, state, body, admission.release);
  }

  /** A repeated start with a known request_id attaches to the request; it never starts a second one. */
  private reattach(c: Connection, s: StreamState, model: string): void {
    if (s.model !== model) {
      return c.error(
        'duplicate_request',
        'invalid',
        `request_id ${s.requestId} is already used for model ${s.model}; pick a new request_id for a new request.`,
        { request_id: s.requestId },
      );
    }
    if (s.delivered) {
      return c.error(
        'duplicate_request',
        'invalid',
        `Request ${s.requestId} already completed and every message was acknowledged; use a new request_id for a new request.`,
        { request_id: s.requestId },
      );
    }
    this.log.debug(`stream ${s.requestId}: repeated start attaches to the running request`, { requestId: internalId(s) });
    // The connection it already streams to just carries on; another one gets what was not acked.
    this.sendStarted(c, s, s.attachedTo === c ? s.lastSent : s.lastAcked);
    this.attach(c, s, s.lastAcked);
  }

  private resume(c: Connection, keyId: string, m: StartMessage): void {
    const check = this.tokens.verify(m.resume_token as string);
    if (!check.ok) {
      const rid = check.requestId ?? m.request_id;
      return c.error(check.code, 'invalid', check.message, { ...(rid ? { request_id: rid } : {}), ...(check.reason ? { reason: check.reason } : {}) });
    }
    const at2 = { request_id: check.requestId };
    if (check.keyId !== keyId) {
      return c.error('invalid_resume_token', 'invalid', 'The resume token was issued to another API key; resume with the key that started the request.', {
        ...at2,
        reason: 'other_key' satisfies ResumeRefusalReason,
      });
    }
    if (m.request_id && m.request_id !== check.requestId) {
      return c.error('invalid_resume_token', 'invalid', `The resume token belongs to request ${check.requestId}, not ${m.request_id}.`, {
        ...at2,
        reason: 'other_request' satisfies ResumeRefusalReason,
      });
    }
    const s = this.registry.get(keyId, check.requestId);
    if (!s) {
      return c.error(
        'resume_unavailable',
        'invalid',
        `Request ${check.requestId} is no longer kept (finished or abandoned more than ${Math.round(this.o.resumeTtlMs / 1000)} s ago, dropped for memory, or the gateway restarted). Send the full start again with a new request_id.`,
        at2,
      );
    }
    if (s.delivered) {
      return c.error(
        'duplicate_request',
        'invalid',
        `Request ${s.requestId} already completed and every message was acknowledged; nothing is left to resume.`,
        at2,
      );
    }
    const from = Math.max(check.lastSeq, s.lastAcked);
    this.log.debug(`stream ${s.requestId}: resumed after seq ${from}`, { requestId: internalId(s) });
    this.sendStarted(c, s, from);
    this.attach(c, s, from);
  }

  private sendStarted(c: Connection, s: StreamState, from: number): void {
    c.json({
      type: 'started',
      request_id: s.requestId,
      resume_token: resumeToken(this.run, s, from),
      resumed: true,
      from_seq: from + 1,
      initial_metadata: { model: s.model, console_request_id: internalId(s), finished: s.finished },
      compatibility: compatibility(this.o.window, this.o.resumeTtlMs),
    });
  }

  private attach(c: Connection, s: StreamState, from: number): void {
    const previous = s.attachedTo;
    if (previous && previous !== c) this.conns.get(previous.id)?.attached.delete(s);
    c.attached.add(s);
    s.attach(c, from);
    this.registry.schedule(s);
  }

  private ack(c: Connection, requestId: string, seq: number): void {
    const s = this.registry.get(c.keyId as string, requestId);
    if (!s)
      return c.error('unknown_request', 'invalid', `No request ${requestId} is kept for this key (it finished long ago or never started).`, {
        request_id: requestId,
      });
    const r = s.ack(c, seq);
    if (r === 'not_attached') {
      return c.error('not_attached', 'invalid', `Request ${requestId} is streaming to another connection; send start with its resume_token to move it here.`, {
        request_id: requestId,
      });
    }
    if (r === 'ahead') return c.error('invalid_ack', 'invalid', `ack seq ${seq} is beyond the last message sent (${s.lastSent}).`, { request_id: requestId });
  }

  private cancel(c: Connection, requestId: string): void {
    const s = this.registry.get(c.keyId as string, requestId);
    if (!s) return c.error('unknown_request', 'invalid', `No request ${requestId} is running for this key.`, { request_id: requestId });
    if (s.finished) return; // it ended before the cancel arrived: its terminal message says how
    s.cancelledByClient = true;
    s.controller.abort(new Error('cancelled by the client'));
    this.log.debug(`stream ${requestId}: cancelled by the client`, { requestId: internalId(s) });
  }

  private ackTimeout(s: StreamState, conn: StreamConn): void {
    const c = this.conns.get(conn.id);
    const secs = Math.round(this.o.ackTimeoutMs / 1000);
    this.log.warn(`stream ${s.requestId}: no ack for ${secs} s with the window full; disconnecting the client and cancelling the request`, {
      requestId: internalId(s),
    });
    c?.error(
      'ack_timeout',
      'cancelled',
      `No ack for ${secs} s while ${s.unacked} messages waited; the request was cancelled. Send {"type":"ack","request_id":…,"seq":N} as you consume deltas.`,
      {
        request_id: s.requestId,
      },
    );
    this.registry.remove(s, 'the client stopped acking');
    c?.ws.close(CLOSE.policy, 'ack timeout');
  }

  private closed(c: Connection): void {
    this.clearTimers(c);
    this.conns.delete(c.id);
    for (const s of c.attached) {
      s.detach(c);
      this.registry.schedule(s);
    }
    c.attached.clear();
  }

  private clearTimers(c: Connection): void {
    c.stopKeepAlive?.();
    if (c.authTimer) clearTimeout(c.authTimer);
  }
}
