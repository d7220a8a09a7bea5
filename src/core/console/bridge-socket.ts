// The bridge over one WebSocket: `{id, channel, args}` in, `{id, reply: InvokeReply}` out, and event
// batches `{events}` pushed by the server. Anything malformed is answered with an error reply; a bad
// message never closes the socket or reaches the agent.
import type { WebSocket } from 'ws';
import { z } from 'zod';
import { bridgeErrorCode, confirmationOf } from '../../shared/bridge-error';
import type { BridgeBackend, InvokeReply } from '../../shared/bridge/transport';
import { isInvokeChannel, type InvokeChannel } from '../../shared/bridge/channels';
import { invokeSchemas } from '../../shared/bridge/schemas';
import type { Logger } from '../base/log';
import { formatIssues } from '../../shared/zod-issues';
import { JSON_LIMITS, readJson } from '../http/bounded-json';

const requestSchema = z.object({
  id: z.union([z.string().min(1).max(64), z.number().int().nonnegative()]),
  channel: z.string().max(64),
  args: z.unknown().optional(),
});

/** Invokes a client may have running at once; more are refused with an error reply. */
export const MAX_IN_FLIGHT = 64;

export type ReplyMessage = { id: string | number | null; reply: InvokeReply<unknown> };

function errorText(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  return typeof err === 'string' ? err : 'The agent could not complete this request.';
}

/** Channels the console server answers itself (its sessions), with the validated arguments. */
export type LocalChannels = Partial<Record<InvokeChannel, (args: unknown) => unknown>>;

/** Handles one message; resolves with the reply to send (never rejects). */
export async function handleBridgeMessage(backend: BridgeBackend, raw: string, log?: Logger, local: LocalChannels = {}): Promise<ReplyMessage> {
  const read = readJson(raw, JSON_LIMITS.bridge);
  if (!read.ok) {
    return {
      id: null,
      reply: {
        ok: false,
        code: 'malformed',
        error: read.code === 'not_json' ? 'The message is not valid JSON.' : `The message was refused unread: ${read.message}.`,
      },
    };
  }
  const data = read.value;
  const parsed = requestSchema.safeParse(data);
  if (!parsed.success) {
    const id = typeof data === 'object' && data !== null && 'id' in data && (typeof data.id === 'string' || typeof data.id === 'number') ? data.id : null;
    return { id, reply: { ok: false, code: 'malformed', error: `Malformed request: ${formatIssues(parsed.error)}` } };
  }
  const { id, channel } = parsed.data;
  if (!isInvokeChannel(channel)) return { id, reply: { ok: false, code: 'unknown_channel', error: `Unknown channel "${channel}".` } };
  const args = invokeSchemas[channel].safeParse(parsed.data.args ?? {});
  if (!args.success) return { id, reply: { ok: false, code: 'invalid_args', error: `Invalid arguments for ${channel}: ${formatIssues(args.error)}` } };
  try {
    const own = local[channel];
    const value = own ? await own(args.data) : await backend.invoke(channel, args.data);
    return { id, reply: { ok: true, value } };
  } catch (err) {
    log?.warn(`console: ${channel} failed: ${errorText(err)}`);
    const confirmation = confirmationOf(err);
    return { id, reply: { ok: false, code: bridgeErrorCode(err), error: errorText(err), ...(confirmation ? { confirmation } : {}) } };
  }
}

/**
 * Wires one client socket to the backend's invoke. `beforeReply` runs right before each reply is sent:
 * the server flushes its event batcher there, so every event the agent emitted before answering reaches
 * the page before the answer (a fetched request text and the deltas that follow it never overlap).
 */
export function serveBridgeSocket(ws: WebSocket, backend: BridgeBackend, log?: Logger, beforeReply?: () => void, local: LocalChannels = {}): void {
  let inFlight = 0;
  const send = (msg: ReplyMessage) => {
    if (ws.readyState !== ws.OPEN) return;
    let text: string;
    try {
      text = JSON.stringify(msg);
    } catch (e) {
      // An answer that cannot be encoded fails this one call, with its id; the socket carries on.
      log?.error(`console: an answer could not be encoded: ${(e as Error).message}`);
      text = JSON.stringify({ id: msg.id, reply: { ok: false, code: 'failed', error: 'The agent could not encode its answer; see the agent log.' } });
    }
    ws.send(text);
  };
  ws.on('message', (data, isBinary) => {
    if (isBinary) {
      send({ id: null, reply: { ok: false, code: 'malformed', error: 'Binary messages are not accepted; send JSON text.' } });
      return;
    }
    if (inFlight >= MAX_IN_FLIGHT) {
      send({ id: null, reply: { ok: false, code: 'too_many', error: `Too many requests at once (limit ${MAX_IN_FLIGHT}); wait for replies.` } });
      return;
    }
    inFlight++;
    const text = Array.isArray(data) ? Buffer.concat(data).toString('utf8') : Buffer.from(data as ArrayBuffer).toString('utf8');
    void handleBridgeMessage(backend, text, log, local)
      .catch((e: unknown): ReplyMessage => {
        log?.error(`console: a bridge call failed unexpectedly: ${(e as Error).message}`);
        return { id: null, reply: { ok: false, code: 'failed', error: 'The agent failed to handle this request; see the agent log.' } };
      })
      .then((reply) => {
        inFlight--;
        beforeReply?.();
        send(reply);
      });
  });
}
