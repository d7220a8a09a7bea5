// The pure half of the desktop IPC: who may call, what they may pass, and how every answer is wrapped.
// No electron import here, so test/main/ipc-guard.test.ts runs it in plain Node. src/main/ipc.ts feeds it Electron's events.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Logger } from '../core/base/log';
import { bridgeErrorCode, confirmationOf, type BridgeErrorCode } from '../shared/bridge-error';
import type { BridgeBackend, InvokeReply } from '../shared/bridge/transport';
import { isInvokeChannel, type InvokeChannel } from '../shared/bridge/channels';
import { invokeSchemas } from '../shared/bridge/schemas';
import { formatIssues } from '../shared/zod-issues';

/** Where our renderer is loaded from: the built file, or the electron-vite dev server. */
export type RendererLocation = { kind: 'file'; indexFile: string } | { kind: 'dev'; url: string };

/** What main knows about the frame that sent a message. */
export interface SenderInfo {
  webContentsId: number;
  /** null when the frame has navigated away or was destroyed. */
  frameUrl: string | null;
  isMainFrame: boolean;
}

/** Why a sender was refused: another window, a frame inside the page, or a page that is not the app. */
export type SenderRefusal = 'other_contents' | 'sub_frame' | 'not_app_page';

export type Verdict = { ok: true } | { ok: false; code: SenderRefusal; reason: string };

/** Largest accepted argument object, measured as JSON (the biggest real one, a settings patch, is ~5 KB). */
export const MAX_ARGS_BYTES = 64 * 1024;
/** Longest error text sent back to the UI. */
const MAX_ERROR_CHARS = 2000;

/** Text safe to put in a log line or an error: bounded, one line. */
export function describe(value: unknown, max = 80): string {
  let text: string;
  if (typeof value === 'string') text = JSON.stringify(value);
  else if (value === undefined) text = 'undefined';
  else {
    try {
      text = JSON.stringify(value) ?? String(value);
    } catch {
      text = Object.prototype.toString.call(value);
    }
  }
  text = text.replace(/\s+/g, ' ');
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** The exact URL (no query or hash) of the page our window loads, or the dev server's origin. */
export function isAppUrl(url: string | null | undefined, renderer: RendererLocation): boolean {
  if (!url) return false;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  if (renderer.kind === 'file') {
    if (u.protocol !== 'file:' || u.host !== '') return false;
    u.search = '';
    u.hash = '';
    return u.href === pathToFileURL(path.resolve(renderer.indexFile)).href;
  }
  let dev: URL;
  try {
    dev = new URL(renderer.url);
  } catch {
    return false;
  }
  return (dev.protocol === 'http:' || dev.protocol === 'https:') && u.origin === dev.origin;
}

/** Only the main frame of our own window, showing our own page, may talk to the agent. */
export function checkSender(sender: SenderInfo, expected: { webContentsId: number | undefined; renderer: RendererLocation }): Verdict {
  if (expected.webContentsId === undefined || sender.webContentsId !== expected.webContentsId) {
    return { ok: false, code: 'other_contents', reason: `message from another web contents (id ${sender.webContentsId})` };
  }
  if (!sender.isMainFrame) return { ok: false, code: 'sub_frame', reason: `message from a sub-frame ${describe(sender.frameUrl)}` };
  if (!isAppUrl(sender.frameUrl, expected.renderer)) {
    return { ok: false, code: 'not_app_page', reason: `message from a page that is not the app: ${describe(sender.frameUrl)}` };
  }
  return { ok: true };
}

export type ValidatedCall = { ok: true; channel: InvokeChannel; args: unknown } | { ok: false; error: string; code: BridgeErrorCode };

/** Channel on the allow-list, arguments within the size cap and matching the channel's schema. */
export function validateCall(channel: unknown, args: unknown): ValidatedCall {
  if (!isInvokeChannel(channel)) {
    return {
      ok: false,
      code: 'unknown_channel',
      error: `Unknown action ${describe(channel, 64)}. The app and its window may be out of step: restart the app.`,
    };
  }
  const input = args === undefined ? {} : args;
  let size: number;
  try {
    size = Buffer.byteLength(JSON.stringify(input) ?? '', 'utf8');
  } catch {
    return { ok: false, code: 'invalid_args', error: `Invalid arguments for ${channel}: they cannot be read as plain data.` };
  }
  if (size > MAX_ARGS_BYTES) {
    return { ok: false, code: 'invalid_args', error: `Invalid arguments for ${channel}: ${size} bytes is more than the ${MAX_ARGS_BYTES} allowed.` };
  }
  const parsed = invokeSchemas[channel].safeParse(input);
  if (!parsed.success) {
    return { ok: false, code: 'invalid_args', error: `Invalid arguments for ${channel}: ${formatIssues(parsed.error, { root: 'arguments', limit: 5 })}` };
  }
  return { ok: true, channel, args: parsed.data };
}

/** Turns whatever a call throws into plain text for the owner. */
export function errorText(err: unknown): string {
  const text = err instanceof Error ? err.message : typeof err === 'string' ? err : 'The agent failed without saying why; see the log.';
  const oneLine = text.trim() || 'The agent failed without saying why; see the log.';
  return oneLine.length > MAX_ERROR_CHARS ? `${oneLine.slice(0, MAX_ERROR_CHARS)}…` : oneLine;
}

/** Runs `work` and never throws: the result or the error travels back as an InvokeReply. */
export async function toReply<T>(work: () => Promise<T> | T): Promise<InvokeReply<T>> {
  try {
    return { ok: true, value: await work() };
  } catch (err) {
    const confirmation = confirmationOf(err);
    return { ok: false, code: bridgeErrorCode(err), error: errorText(err), ...(confirmation ? { confirmation } : {}) };
  }
}

export interface InvokeContext {
  backend: BridgeBackend;
  log: Logger;
  expected: { webContentsId: number | undefined; renderer: RendererLocation };
}

/** The whole path of one `swan:invoke`: sender check, validation, the call, the reply. */
export async function guardedInvoke(ctx: InvokeContext, sender: SenderInfo, channel: unknown, args: unknown): Promise<InvokeReply<unknown>> {
  const verdict = checkSender(sender, ctx.expected);
  if (!verdict.ok) {
    ctx.log.warn(`Dropped an IPC call to ${describe(channel, 64)}: ${verdict.reason}`);
    return { ok: false, code: 'refused', error: 'Refused: this page is not allowed to talk to the agent.' };
  }
  const call = validateCall(channel, args);
  if (!call.ok) {
    ctx.log.warn(call.error);
    return { ok: false, code: call.code, error: call.error };
  }
  const reply = await toReply(() => ctx.backend.invoke(call.channel, call.args));
  if (!reply.ok) ctx.log.debug(`${call.channel} failed: ${reply.error}`);
  return reply;
}
