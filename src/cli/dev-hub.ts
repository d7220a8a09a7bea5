// A reference Swan Inference hub for development, demos and tests. It speaks the hub side of every
// message the agent speaks (seed 000 + DESIGN.md + resume-v1) and exposes an OpenAI-compatible HTTP
// API (POST /v1/chat/completions, /v1/completions, GET /v1/models) that routes each request to a
// connected provider serving the model. Not a production hub: no accounts, no billing.
import { EventEmitter } from 'node:events';
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, WebSocket } from 'ws';
import { SIMULATED_HUB_EXTENSION } from '../shared/networks';
import { DevPlatform, DEV_STATUS_NAMES, type DevStatusName, type FailureKind } from './dev-hub-platform';
import { DevRepository } from './dev-hub-repository';
import { requestTarget } from '../core/http/request-target';
import { readBody } from '../core/http/read-body';

export interface DevHubOptions {
  host?: string;
  port?: number;
  /** Provider key the hub accepts; any non-empty key when omitted. */
  token?: string;
  /** Ask reconnecting providers (with resume-v1) to resume unfinished streams. Default true. */
  resume?: boolean;
  /** How long an HTTP request waits for a provider that dropped to come back (default 30 s). */
  reattachMs?: number;
  log?: (line: string) => void;
  /** What GET /api/v1/provider/status says about earnings (default false here; the `dev-hub` command and the demo turn it on). */
  earningsEnabled?: boolean;
  /** Provider status per key for GET /api/v1/provider/status (fixtures in dev-hub-fixtures/); others: active, unknown keys invalid. */
  statuses?: Record<string, DevStatusName>;
  /** A key the status API reports as pending review (the fixtures' "pending" status, with next steps). */
  pendingToken?: string;
  /** A folder served as the Swan model repository (`<dir>/<org>/<name>/<files>`, dev-hub-repository.ts); read and hashed before listening. */
  repository?: string;
  /** Bytes a second the repository's file responses are held to (a slow network); default: no limit. */
  repositoryRate?: number;
}

export interface DevProvider {
  nodeId: string;
  nodeName: string;
  models: string[];
  health: Record<string, string>;
  hardware: Record<string, unknown>;
  capabilities: string[];
  registers: number;
  heartbeats: number;
  connected: boolean;
  /** The last heartbeat's metrics, as sent (Go keys: utilisation in percent 0..100). */
  metrics: Record<string, number>;
  ws?: WebSocket;
}

/** A heartbeat's metrics as a line a person reads: the Go keys are percent and MiB. */
export function describeMetrics(m: Record<string, number>): string {
  const pct = (k: string): string => (typeof m[k] === 'number' ? `${Math.round(m[k]!)} %` : 'n/a');
  const parts = [`GPU ${pct('gpu_utilization')}`, `memory ${pct('memory_utilization')}`];
  if (typeof m.active_requests === 'number') parts.push(`${m.active_requests} active request(s)`);
  return parts.join(', ');
}

interface Pending {
  id: string;
  nodeId: string;
  stream: boolean;
  lastSeq: number;
  onMessage: (type: string, payload: Record<string, unknown>) => void;
  timer?: NodeJS.Timeout;
}

export interface DevHub {
  url: string;
  wsUrl: string;
  port: number;
  providers(): DevProvider[];
  /** Every message received from providers, in order (tests read it). */
  received: Array<{ nodeId: string; type: string; payload: Record<string, unknown>; requestId?: string }>;
  events: EventEmitter;
  /** Sends a raw frame to every connected provider (tests use it for malformed input). */
  broadcastRaw(text: string): void;
  /** Sends a hub -> provider request and waits for the reply of `replyType` with the same id. */
  call(nodeId: string, type: string, payload: Record<string, unknown>, replyType: string, timeoutMs?: number): Promise<Record<string, unknown>>;
  dropProviders(): void;
  /** Sends a `notice` (hub -> provider) to one provider or to every connected one; returns how many got it. */
  notice(payload: Record<string, unknown>, nodeId?: string): number;
  /** The platform HTTP API stand-in: per-key status and what was served. */
  platform: DevPlatform;
  /** The model repository, when `repository` was given. */
  repository?: DevRepository;
  behaviour: {
    ackHeartbeats: boolean;
    answerPings: boolean;
    stallReads: boolean;
    duplicates: number;
    /** Ack with `"request_id": ""` (a hub that leaves it unset; Go's AckPayload has no omitempty). */
    ackWithoutIds: boolean;
  };
  close(): Promise<void>;
}

function json(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** A /dev route's JSON object body (an empty body is `{}`); undefined when the body is not a JSON object. */
async function readJsonObject(req: http.IncomingMessage): Promise<Record<string, unknown> | undefined> {
  try {
    const body: unknown = JSON.parse((await readBody(req)) || '{}');
    return typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

const NOT_JSON = { error: { message: 'the body is not a JSON object' } };

/** A usage-only stream chunk (`choices: []` plus usage), as engines send for stream_options.include_usage. */
function isUsageOnly(chunk: unknown): boolean {
  const c = chunk as { choices?: unknown; usage?: unknown } | null;
  return !!c && typeof c === 'object' && Array.isArray(c.choices) && c.choices.length === 0 && c.usage != null;
}

export async function startDevHub(opts: DevHubOptions = {}): Promise<DevHub> {
  const log = opts.log ?? (() => {});
  // First, so a folder that cannot be read refuses the start before anything listens.
  const repository = opts.repository !== undefined ? await DevRepository.load(opts.repository, { rateBytesPerSec: opts.repositoryRate ?? 0 }) : undefined;
  const providers = new Map<string, DevProvider>();
  const pending = new Map<string, Pending>();
  const events = new EventEmitter();
  events.setMaxListeners(0);
  const received: DevHub['received'] = [];
  const behaviour = { ackHeartbeats: true, answerPings: true, stallReads: false, duplicates: 0, ackWithoutIds: false };
  const resumeOn = opts.resume ?? true;
  /** The register ack's upgrade_available, as the v0.5 hub sends it (POST /dev/upgrade sets it). */
  let upgradeAdvice: { running?: string; latest?: string; message?: string } | undefined;
  const platform = new DevPlatform(
    opts.token,
    opts.earningsEnabled ?? false,
    {
      ...opts.statuses,
      ...(opts.pendingToken ? { [opts.pendingToken]: 'pending' as const } : {}),
    },
    // The repository's models get simulated demand, so `models recommend` has a figure for each.
    repository?.demandRows() ?? [],
  );
  /** Provider key per node, for the platform's per-key stats. */
  const keyOf = new Map<string, string>();

  const send = (ws: WebSocket | undefined, msg: { type: string; request_id?: string; payload?: Record<string, unknown> }): boolean => {
    if (!ws || ws.readyState !== WebSocket.OPEN) return false;
    if (msg.type === 'ack') {
      // Go's AckPayload {request_id string (no omitempty), success, message}: the id is always there, "" when unset.
      const id = behaviour.ackWithoutIds ? '' : (msg.request_id ?? (typeof msg.payload?.request_id === 'string' ? msg.payload.request_id : ''));
      const { request_id: _env, ...rest } = msg;
      msg = { ...rest, ...(id ? { request_id: id } : {}), payload: { message: '', ...msg.payload, request_id: id, success: msg.payload?.success ?? true } };
    }
    ws.send(JSON.stringify(msg));
    return true;
  };

  const pick = (model: string): DevProvider | undefined => {
    const candidates = [...providers.values()].filter((p) => p.connected && p.models.includes(model) && p.health[model] !== 'unhealthy');
    return candidates[Math.floor(Math.random() * candidates.length)];
  };

  const wss = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024, autoPong: false });
  wss.on('connection', (ws) => {
    let provider: DevProvider | undefined;
    ws.on('ping', (data) => {
      if (behaviour.answerPings) ws.pong(data);
    });
    ws.on('error', () => {});
    ws.on('message', (data) => {
      let msg: { type?: string; request_id?: string; payload?: Record<string, unknown> };
      try {
        msg = JSON.parse(data.toString());
      } catch {
        send(ws, { type: 'error', payload: { code: 400, message: 'invalid JSON' } });
        return;
      }
      const payload = msg.payload ?? {};
      const type = String(msg.type);
      if (type === 'register') {
        const token = String(payload.token ?? '');
        if (!platform.knowsKey(token)) {
          send(ws, { type: 'error', request_id: msg.request_id, payload: { request_id: msg.request_id, code: 401, message: 'invalid provider API key' } });
          log(`refused a provider: invalid key`);
          ws.close(4001, 'invalid provider API key');
          return;
        }
        const nodeId = String(payload.node_id ?? '');
        const prev = providers.get(nodeId);
        if (prev?.ws && prev.ws !== ws) prev.ws.terminate();
        provider = {
          nodeId,
          nodeName: String(payload.node_name ?? ''),
          models: Array.isArray(payload.models) ? payload.models.map(String) : [],
          health: prev?.health ?? {},
          hardware: (payload.hardware as Record<string, unknown>) ?? {},
          capabilities: Array.isArray(payload.capabilities) ? payload.capabilities.map(String) : [],
          registers: (prev?.registers ?? 0) + 1,
          heartbeats: prev?.heartbeats ?? 0,
          connected: true,
          metrics: prev?.metrics ?? {},
          ws,
        };
        providers.set(nodeId, provider);
        keyOf.set(nodeId, token);
        platform.connected(token);
        // resume-v1 is an extension of ours: the agent keeps streams alive across a drop only when the ack says so.
        // simulated-network: the console says that this network and its money are simulated.
        send(ws, {
          type: 'ack',
          request_id: msg.request_id,
          payload: {
            request_id: msg.request_id,
            success: true,
            message: 'registered successfully',
            extensions: [...(resumeOn ? ['resume-v1'] : []), SIMULATED_HUB_EXTENSION],
            ...(upgradeAdvice ? { upgrade_available: upgradeAdvice } : {}),
          },
        });
        log(`provider ${provider.nodeName || nodeId.slice(0, 12)} registered with ${provider.models.length} model(s): ${provider.models.join(', ')}`);
        events.emit('register', provider);
        if (resumeOn && provider.capabilities.includes('resume-v1')) {
          for (const p of pending.values()) {
            if (p.nodeId === nodeId) send(ws, { type: 'resume', payload: { request_id: p.id, last_seq: p.lastSeq } });
          }
        }
        return;
      }
      if (!provider) {
        send(ws, { type: 'error', payload: { code: 400, message: 'register first' } });
        return;
      }
      received.push({ nodeId: provider.nodeId, type, payload, ...(msg.request_id ? { requestId: msg.request_id } : {}) });
      events.emit('message', { nodeId: provider.nodeId, type, payload, requestId: msg.request_id });
      if (type === 'heartbeat') {
        provider.heartbeats++;
        if (payload.metrics && typeof payload.metrics === 'object') {
          provider.metrics = Object.fromEntries(
            Object.entries(payload.metrics as Record<string, unknown>).filter((e): e is [string, number] => typeof e[1] === 'number'),
          );
          if (provider.heartbeats === 1) log(`provider ${provider.nodeName || provider.nodeId.slice(0, 12)} heartbeat: ${describeMetrics(provider.metrics)}`);
        }
        if (Array.isArray(payload.models)) provider.models = payload.models.map(String);
        if (payload.model_health && typeof payload.model_health === 'object') provider.health = payload.model_health as Record<string, string>;
        if (behaviour.ackHeartbeats) send(ws, { type: 'ack', request_id: msg.request_id, payload: { request_id: msg.request_id, success: true } });
        events.emit('heartbeat', provider, payload);
        return;
      }
      if (type === 'model_health_update') {
        provider.health = (payload.model_health as Record<string, string>) ?? {};
        events.emit('health', provider);
        return;
      }
      // Replies are routed by the envelope's request_id (the Go provider sets it), else the payload's.
      const rid = String(msg.request_id || (payload.request_id ?? ''));
      const p = pending.get(rid);
      if (!p) return;
      const seq = typeof payload.seq === 'number' ? payload.seq : undefined;
      if (seq !== undefined) {
        if (seq <= p.lastSeq) {
          behaviour.duplicates++;
          return; // de-duplicate by (request_id, seq)
        }
        p.lastSeq = seq;
      }
      p.onMessage(type, payload);
    });
    ws.on('close', () => {
      if (provider && providers.get(provider.nodeId)?.ws === ws) {
        provider.connected = false;
        provider.ws = undefined;
        events.emit('disconnect', provider);
        log(`provider ${provider.nodeName || provider.nodeId.slice(0, 12)} disconnected`);
      }
    });
    // TCP stall: stop reading from this provider while set. ws itself resumes the socket whenever its
    // receiver drains, so a stalled socket is paused again on every 'resume' (before any data flows).
    const sock = (ws as unknown as { _socket?: { pause(): void; resume(): void; on(ev: 'resume', cb: () => void): void } })._socket;
    sock?.on('resume', () => {
      if (behaviour.stallReads) sock.pause();
    });
    const stallCheck = setInterval(() => {
      if (behaviour.stallReads) sock?.pause();
      else sock?.resume();
    }, 20);
    ws.on('close', () => clearInterval(stallCheck));
  });

  const call: DevHub['call'] = (nodeId, type, payload, replyType, timeoutMs = 30_000) => {
    const p = providers.get(nodeId);
    const id = crypto.randomUUID();
    return new Promise((resolve, reject) => {
      const entry: Pending = {
        id,
        nodeId,
        stream: false,
        lastSeq: 0, // seq counts from 1: 0 is "nothing received yet" (a resume's last_seq is never negative)
        onMessage: (t, pl) => {
          if (t !== replyType && t !== 'error') return;
          clearTimeout(entry.timer);
          pending.delete(id);
          resolve({ ...pl, _type: t });
        },
      };
      entry.timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error(`no ${replyType} within ${timeoutMs} ms`));
      }, timeoutMs);
      pending.set(id, entry);
      if (!send(p?.ws, { type, request_id: id, payload: { ...payload, request_id: id } })) {
        clearTimeout(entry.timer);
        pending.delete(id);
        reject(new Error(`provider ${nodeId} is not connected`));
      }
    });
  };

  async function inference(req: http.IncomingMessage, res: http.ServerResponse, path: string): Promise<void> {
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(await readBody(req));
    } catch (e) {
      json(res, 400, { error: { message: `invalid JSON body: ${(e as Error).message}`, type: 'invalid_request_error' } });
      return;
    }
    const model = String(body.model ?? '');
    const provider = pick(model);
    if (!provider) {
      json(res, 404, { error: { message: `no provider serves model "${model}" right now`, type: 'invalid_request_error', code: 'model_not_found' } });
      return;
    }
    const id = crypto.randomUUID();
    const stream = body.stream === true;
    // The provider always forwards the engine's usage chunk (the hub bills from it); like the real hub,
    // pass it on only to a client that asked for it (a `choices: []` chunk breaks `chunk.choices[0]`).
    const wantsUsage = (body.stream_options as { include_usage?: unknown } | null | undefined)?.include_usage === true;
    const request = path === '/v1/completions' && body.prompt === undefined ? { ...body, prompt: '' } : body;
    let finished = false;
    let sawDone = false;
    let sawData = false;
    /** The error-first chunk's text: the hub classifies a failed stream from its first chunk. */
    let errorFirst: string | undefined;
    const account = (ok: boolean, failure?: FailureKind, pl?: Record<string, unknown>): void => {
      const tokens = (k: string): number => (typeof pl?.[k] === 'number' ? (pl[k] as number) : 0);
      platform.record(keyOf.get(provider.nodeId) ?? '', {
        ok,
        model,
        ...(failure ? { failure } : {}),
        tokensIn: tokens('tokens_input'),
        tokensOut: tokens('tokens_output'),
      });
    };
    const finish = (): void => {
      finished = true;
      clearTimeout(entry.timer);
      pending.delete(id);
    };
    const entry: Pending = {
      id,
      nodeId: provider.nodeId,
      stream,
      lastSeq: 0,
      onMessage: (type, pl) => {
        if (finished) return;
        if (type === 'error') {
          const code = Number(pl.code) || 502;
          if (!res.headersSent) json(res, code, { error: { message: String(pl.message ?? 'provider error'), code } });
          else {
            res.write(`data: ${JSON.stringify({ error: { message: String(pl.message ?? 'provider error'), code } })}\n\n`);
            res.end();
          }
          finish();
          return;
        }
        if (!stream) {
          if (type !== 'ack') return;
          const status = Number(pl.status_code) || 200;
          // An engine error body that is not a JSON object (an HTML page, plain text) says nothing to an
          // OpenAI client: answer with the provider's error text instead.
          const body = pl.response;
          const usable = status < 400 ? body !== undefined && body !== null : typeof body === 'object' && body !== null && !Array.isArray(body);
          json(res, status, usable ? body : { error: { message: String(pl.error ?? 'no response'), code: status } });
          account(status < 400, status < 400 ? undefined : 'non_stream', pl);
          finish();
          return;
        }
        if (type === 'stream_chunk') {
          if (pl.error !== undefined && pl.error !== null && !sawData) {
            // Error-first chunk {chunk: null, done: true, error}: the failure is classified; stream_end brings its status.
            errorFirst = String(pl.error);
            return;
          }
          sawData = true;
          if (!res.headersSent) res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
          if (pl.done === true) {
            sawDone = true;
            res.write('data: [DONE]\n\n');
          } else if (wantsUsage || !isUsageOnly(pl.chunk)) res.write(`data: ${JSON.stringify(pl.chunk)}\n\n`);
          return;
        }
        if (type === 'stream_end') {
          if (pl.error !== undefined || errorFirst !== undefined) {
            const status = Number(pl.status_code) || 502;
            const message = String(pl.error ?? errorFirst);
            let failure: FailureKind = 'mid_stream';
            if (errorFirst !== undefined) failure = 'error_first';
            else if (!sawData) {
              // What the real hub does with it: no error-first chunk, so the stream reads as a provider failure.
              failure = 'provider_failure';
              log(
                `request ${id.slice(0, 8)} ${model}: provider failure (error only in stream_end, no error-first chunk; the real hub would send this request to another provider): ${message}`,
              );
            }
            account(false, failure, pl);
            if (!res.headersSent) json(res, status, { error: { message, code: status } });
            else res.end(`data: ${JSON.stringify({ error: { message, code: status } })}\n\n`);
          } else {
            account(true, undefined, pl);
            if (!res.headersSent) res.writeHead(200, { 'content-type': 'text/event-stream' });
            res.end(sawDone ? '' : 'data: [DONE]\n\n');
          }
          log(
            `request ${id.slice(0, 8)} ${model}: ${pl.error ? `error ${String(pl.error)}` : 'ok'}, ${String(pl.tokens_input)} in / ${String(pl.tokens_output)} out, ${String(pl.latency_ms)} ms`,
          );
          events.emit('served', { id, model, payload: pl });
          finish();
        }
      },
    };
    pending.set(id, entry);
    const onDisconnect = (p: DevProvider): void => {
      if (p.nodeId !== provider.nodeId || finished) return;
      const resumable = resumeOn && p.capabilities.includes('resume-v1');
      clearTimeout(entry.timer);
      entry.timer = setTimeout(
        () => {
          if (finished) return;
          const msg = 'the provider disconnected before finishing the answer';
          if (!res.headersSent) json(res, 502, { error: { message: msg } });
          else res.end(`data: ${JSON.stringify({ error: { message: msg, code: 502 } })}\n\n`);
          finish();
        },
        resumable ? (opts.reattachMs ?? 30_000) : 0,
      );
    };
    const onRegister = (p: DevProvider): void => {
      if (p.nodeId === provider.nodeId) clearTimeout(entry.timer);
    };
    events.on('disconnect', onDisconnect);
    events.on('register', onRegister);
    res.on('close', () => {
      events.off('disconnect', onDisconnect);
      events.off('register', onRegister);
      if (!finished) {
        send(providers.get(provider.nodeId)?.ws, { type: 'cancel', request_id: id, payload: { request_id: id } });
        finish();
      }
    });
    // A v0.5 hub says what the request is: the OpenAI path after /v1/ (Go's operations.go).
    send(provider.ws, {
      type: 'inference',
      request_id: id,
      payload: { endpoint_id: crypto.randomUUID(), model_id: model, stream, operation: path.replace(/^\/v1\//, ''), request },
    });
  }

  const noticeTo = (payload: Record<string, unknown>, nodeId?: string): number => {
    let sent = 0;
    for (const p of providers.values()) {
      if (nodeId && p.nodeId !== nodeId) continue;
      if (send(p.ws, { type: 'notice', payload })) sent++;
    }
    return sent;
  };

  const server = http.createServer((req, res) => {
    const url = requestTarget(req.url);
    if (!url) return json(res, 400, { error: { message: 'the request target must be a path starting with a single "/"' } });
    const route = `${req.method} ${url.pathname}`;
    const run = async (): Promise<void> => {
      switch (route) {
        case 'POST /v1/chat/completions':
        case 'POST /v1/completions':
          return inference(req, res, url.pathname);
        case 'GET /v1/models': {
          const ids = [...new Set([...providers.values()].filter((p) => p.connected).flatMap((p) => p.models))];
          return json(res, 200, { object: 'list', data: ids.map((id) => ({ id, object: 'model', owned_by: 'swan-dev-hub' })) });
        }
        case 'GET /dev/providers':
          return json(
            res,
            200,
            [...providers.values()].map(({ ws: _ws, ...p }) => ({ ...p, metricsSummary: describeMetrics(p.metrics) })),
          );
        case 'POST /dev/notice': {
          // Body: a notice payload ({event, severity, model_id?, message, details?}), optionally {node_id, notice: {...}}.
          const body = await readJsonObject(req);
          if (!body) return json(res, 400, NOT_JSON);
          const notice = typeof body.notice === 'object' && body.notice !== null ? (body.notice as Record<string, unknown>) : body;
          const sent = noticeTo(notice, typeof body.node_id === 'string' ? body.node_id : undefined);
          log(`sent a notice (${String(notice.event).slice(0, 64)}) to ${sent} provider(s)`);
          return json(res, sent > 0 ? 200 : 404, sent > 0 ? { sent } : { sent, error: { message: 'no connected provider' } });
        }
        case 'POST /dev/upgrade': {
          // Body: {latest, running?, message?}: the next register acks advise an upgrade; connected providers are
          // closed so that they register again (as after a hub restart) and hear it.
          const body = await readJsonObject(req);
          if (!body) return json(res, 400, NOT_JSON);
          const s = (v: unknown): string | undefined => (typeof v === 'string' && v ? v.slice(0, 500) : undefined);
          upgradeAdvice = {
            ...(s(body.running) ? { running: s(body.running) } : {}),
            ...(s(body.latest) ? { latest: s(body.latest) } : {}),
            ...(s(body.message) ? { message: s(body.message) } : {}),
          };
          let closed = 0;
          for (const p of providers.values()) {
            if (p.connected && p.ws) {
              p.ws.close(1012, 'the hub restarts');
              closed++;
            }
          }
          log(
            `advising an upgrade${upgradeAdvice.latest ? ` to ${upgradeAdvice.latest}` : ''} on each register; ${closed} provider(s) asked to register again`,
          );
          return json(res, 200, { closed });
        }
        case 'POST /dev/status': {
          const body = await readJsonObject(req);
          if (!body) return json(res, 400, NOT_JSON);
          if (typeof body.key !== 'string' || !DEV_STATUS_NAMES.includes(body.status as DevStatusName)) {
            return json(res, 400, { error: { message: `send {"key": "...", "status": one of ${DEV_STATUS_NAMES.join(', ')}}` } });
          }
          platform.setStatus(body.key, body.status as DevStatusName);
          return json(res, 200, { key: `${body.key.slice(0, 8)}…`, status: body.status });
        }
        case 'POST /dev/warmup':
        case 'POST /dev/verify':
        case 'POST /dev/benchmark': {
          const body = await readJsonObject(req);
          if (!body) return json(res, 400, NOT_JSON);
          const kind = url.pathname.slice(5);
          const model = String(body.model_id ?? '');
          const p = [...providers.values()].find((x) => x.connected && (!model || x.models.includes(model)));
          if (!p) return json(res, 404, { error: { message: 'no connected provider for that model' } });
          const reply = await call(
            p.nodeId,
            kind,
            body,
            kind === 'warmup' ? 'ack' : kind === 'verify' ? 'verify' : 'benchmark_response',
            Number(body.timeout_ms ?? 30_000) + 5000,
          );
          return json(res, 200, reply);
        }
        default:
          if (repository?.handle(route, url, req, res)) return;
          if (platform.handle(route, url, req, (status, body) => json(res, status, body))) return;
          return json(res, 404, { error: { message: `no route ${route}` } });
      }
    };
    run().catch((e: Error) => {
      if (!res.headersSent) json(res, 500, { error: { message: e.message } });
      else res.end();
    });
  });
  server.on('connect', (_req, socket) => socket.end('HTTP/1.1 405 Method Not Allowed\r\nConnection: close\r\n\r\n'));
  server.on('upgrade', (req, socket, head) => {
    socket.on('error', () => socket.destroy());
    if (requestTarget(req.url)?.pathname !== '/ws') {
      socket.end('HTTP/1.1 404 Not Found\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
  });
  // A busy or foreign address rejects (the command turns it into one line), never an unhandled 'error'.
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e) => {
      wss.close();
      reject(e);
    });
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const host = opts.host ?? '127.0.0.1';
  return {
    url: `http://${host}:${port}`,
    wsUrl: `ws://${host}:${port}`,
    port,
    providers: () => [...providers.values()],
    received,
    events,
    behaviour,
    call,
    notice: noticeTo,
    platform,
    ...(repository ? { repository } : {}),
    broadcastRaw: (text) => {
      for (const p of providers.values()) if (p.ws?.readyState === WebSocket.OPEN) p.ws.send(text);
    },
    dropProviders: () => {
      for (const p of providers.values()) p.ws?.terminate();
    },
    close: async () => {
      for (const c of wss.clients) c.terminate();
      for (const p of pending.values()) clearTimeout(p.timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
