// Parsing an engine's SSE response body into EngineStreamEvents, absorbing every engine's quirks:
// `data:` with or without a space, CRLF, `:` keep-alive comments, `event: error` frames (LM Studio),
// `data: {"error":…}` mid-stream (vLLM, SGLang, llama.cpp, TGI), usage-only chunks, zero usage
// placeholders (Ollama), running usage totals (vLLM), llama.cpp `timings`, and streams without [DONE].
//
// Decisions:
// - A data line that is not a JSON object yields an 'error' event (statusCode 502) and parsing
//   CONTINUES: later chunks are still delivered; the caller decides whether to give up.
// - An event the engine left without its closing blank line at end of stream is still read.
// - The body is read only while the consumer takes events: the engine client pauses the socket while
//   events wait untaken (pulled) or while its push handler holds the last one (engine/client.ts).
import { StringDecoder } from 'node:string_decoder';
import { createParser, type EventSourceMessage, type ParseError } from 'eventsource-parser';
import type { EngineStreamEvent, TokenUsage } from './types';
import { readTimings, readUsage } from './usage';
import { describeEngineError } from './engine-error';
import { BoundedJsonError, JSON_LIMITS, parseJson } from '../http/bounded-json';

export type EngineChunkEvent = Extract<EngineStreamEvent, { type: 'chunk' }>;
export type EngineErrorEvent = Extract<EngineStreamEvent, { type: 'error' }>;

export interface ParseStreamOptions {
  /** /v1/completions: text is choices[0].text (delta.content is still read if text is absent). */
  completions?: boolean;
}

/** One SSE event larger than this (16 MiB of text) ends the stream with an error. */
const MAX_EVENT_CHARS = 16 * 1024 * 1024;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function preview(s: string): string {
  return s.length > 80 ? `${s.slice(0, 80)}…` : s;
}

/** Read one parsed chunk object: text, reasoning, finish reason, token ids and usage of choice 0. */
export function readChunk(data: Record<string, unknown>, completions = false): EngineChunkEvent {
  const choices = Array.isArray(data.choices) ? (data.choices as unknown[]) : undefined;
  const event: EngineChunkEvent = { type: 'chunk', data, text: '', reasoning: '', emptyChoices: !choices || choices.length === 0 };
  const choice = choices?.[0];
  if (isObject(choice)) {
    const delta = isObject(choice.delta) ? choice.delta : undefined;
    const fromText = typeof choice.text === 'string' ? choice.text : undefined;
    const fromDelta = typeof delta?.content === 'string' ? delta.content : undefined;
    event.text = (completions ? (fromText ?? fromDelta) : (fromDelta ?? fromText)) ?? '';
    if (delta) {
      const r = typeof delta.reasoning_content === 'string' ? delta.reasoning_content : delta.reasoning;
      if (typeof r === 'string') event.reasoning = r;
    }
    // TGI completions send finish_reason "" on every non-final chunk.
    if (typeof choice.finish_reason === 'string' && choice.finish_reason) event.finishReason = choice.finish_reason;
    if (Array.isArray(choice.token_ids)) event.tokenIds = (choice.token_ids as unknown[]).filter((n): n is number => typeof n === 'number');
  }
  const usage = readUsage(data.usage);
  if (usage) event.usage = usage;
  return event;
}

/** `"model"` as an object key: after `{` or `,` a quote cannot be inside a string, so only keys match. */
const MODEL_KEY = /[{,]\s*"model"\s*:\s*/g;

/**
 * The JSON text of a chunk to relay: the engine's own bytes when `data` is as parsed, the same bytes with
 * the top-level model's value swapped when only `model` was rewritten (one `"model"` key in the text,
 * its value written as JSON.stringify writes it), else `data` stringified. JSON.parse of the result
 * equals `data` in every case.
 */
export function chunkJson(ev: EngineChunkEvent): string {
  const raw = ev.raw;
  if (raw === undefined) return JSON.stringify(ev.data);
  const model = ev.data.model;
  if (model === ev.rawModel) return raw;
  if (typeof model === 'string' && typeof ev.rawModel === 'string') {
    MODEL_KEY.lastIndex = 0;
    const m = MODEL_KEY.exec(raw);
    if (m && MODEL_KEY.exec(raw) === null) {
      const at = m.index + m[0].length;
      const old = JSON.stringify(ev.rawModel);
      if (raw.startsWith(old, at)) return raw.slice(0, at) + JSON.stringify(model) + raw.slice(at + old.length);
    }
  }
  return JSON.stringify(ev.data);
}

/** An error frame's data (JSON or plain text) as an error event. */
function errorEvent(data: string | Record<string, unknown>): EngineErrorEvent {
  let body: unknown = data;
  if (typeof data === 'string') {
    try {
      body = parseJson(data, JSON_LIMITS.engine);
    } catch {
      body = data;
    }
  }
  const info = describeEngineError(body);
  const ev: EngineErrorEvent = { type: 'error', message: info.message ?? 'the engine reported an error mid-stream without a message' };
  if (info.statusCode) ev.statusCode = info.statusCode;
  return ev;
}

/**
 * The SSE parser as a push machine: feed() the body's bytes as they come, close() once at the end (with
 * the read error, if any); the events wait in `queue` for the caller to take. The engine client feeds it
 * straight from the socket (one layer, no generator per chunk).
 */
export class EngineStreamParser {
  /** Events produced and not yet taken; the caller empties it (queue.length = 0). */
  readonly queue: EngineStreamEvent[] = [];
  /** An event was over MAX_EVENT_CHARS: stop feeding and close(). */
  overflow = false;
  /** close() was called: the final 'end' is in the queue. */
  closed = false;
  private readonly completions: boolean;
  private sawDone = false;
  private finished = false;
  private usage: TokenUsage | undefined;
  private timings: TokenUsage | undefined;
  private dataEvents = 0;
  private strayLines = 0;
  private readonly parser;
  /** UTF-8 across reads (a character split between two reads is held back); invalid bytes become U+FFFD. */
  private readonly decoder = new StringDecoder('utf8');
  private firstText = true;

  constructor(opts: ParseStreamOptions = {}) {
    this.completions = opts.completions === true;
    this.parser = createParser({ onEvent: (ev) => this.onEvent(ev), onError: (err) => this.onError(err), maxBufferSize: MAX_EVENT_CHARS });
  }

  feed(bytes: Uint8Array): void {
    this.feedText(this.decoder.write(bytes));
  }

  private feedText(text: string): void {
    if (this.firstText && text !== '') {
      this.firstText = false;
      // A byte order mark before the first event is not part of it (the SSE spec strips one).
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    this.parser.feed(text);
  }

  /** The body ended (`broke`: with the read error `error`): queues what is left and exactly one 'end'. */
  close(broke = false, error?: unknown): void {
    if (this.closed) return;
    this.closed = true;
    if (!broke) {
      if (!this.overflow) this.feedText(`${this.decoder.end()}\n\n`);
    } else if (!this.overflow) {
      const reason = error instanceof Error ? error.message : String(error);
      this.queue.push({ type: 'error', message: `the engine connection broke off mid-stream (${reason})`, statusCode: 502, connectionLost: true });
    }
    if (this.dataEvents === 0 && this.strayLines > 0) {
      this.queue.push({ type: 'error', message: 'the engine answered with something that is not an SSE stream', statusCode: 502 });
    }
    const end: EngineStreamEvent = { type: 'end', sawDone: this.sawDone, truncated: !this.sawDone && !this.finished };
    const finalUsage = this.usage ?? this.timings;
    if (finalUsage) end.usage = finalUsage;
    this.queue.push(end);
  }

  private onEvent(ev: EventSourceMessage): void {
    const data = ev.data;
    if (ev.event === 'error') {
      this.dataEvents++;
      this.queue.push(errorEvent(data));
      return;
    }
    if (data === '') return;
    this.dataEvents++;
    if (data === '[DONE]') {
      this.sawDone = true;
      return;
    }
    let parsed: unknown;
    try {
      parsed = parseJson(data, JSON_LIMITS.engine);
    } catch (e) {
      const why = e instanceof BoundedJsonError && e.code !== 'not_json' ? `that was refused (${e.message})` : `that is not JSON: ${preview(data)}`;
      this.queue.push({ type: 'error', message: `the engine sent a data line ${why}`, statusCode: 502 });
      return;
    }
    if (!isObject(parsed)) {
      this.queue.push({ type: 'error', message: `the engine sent a data line that is not a JSON object: ${preview(data)}`, statusCode: 502 });
      return;
    }
    if (parsed.error !== undefined && parsed.error !== null) {
      this.queue.push(errorEvent(parsed));
      return;
    }
    const chunk = readChunk(parsed, this.completions);
    chunk.raw = data;
    chunk.rawModel = parsed.model;
    if (chunk.finishReason) this.finished = true;
    if (chunk.usage) this.usage = chunk.usage; // last non-zero wins: running totals and zero placeholders
    const t = readTimings(parsed.timings);
    if (t) this.timings = t;
    this.queue.push(chunk);
  }

  private onError(err: ParseError): void {
    if (err.type === 'unknown-field') {
      this.strayLines++;
    } else if (err.type === 'max-buffer-size-exceeded') {
      this.overflow = true;
      this.queue.push({ type: 'error', message: 'the engine sent an SSE event larger than 16 MiB; the stream was stopped', statusCode: 502 });
    }
  }
}
