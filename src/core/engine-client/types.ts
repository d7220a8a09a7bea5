// Contracts of the engine layer: how the agent talks to a local OpenAI-compatible engine.
import type { EngineType } from '../../shared/types';

/** One place a model is served: an engine base URL plus what models.json says about it. */
export interface EngineEndpoint {
  /** Base URL without the /v1 suffix, e.g. http://127.0.0.1:8000 */
  url: string;
  /** Model name the engine knows ("local_model" in models.json); replaces `model` before forwarding. */
  localModel?: string;
  /** Sent as `Authorization: Bearer …` to the engine. */
  apiKey?: string;
  engineType?: EngineType;
}

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
}

/**
 * One event of an engine's SSE stream, after framing quirks are absorbed.
 * `chunk` carries the engine's JSON object verbatim (to relay as-is) plus what we read from it.
 */
export type EngineStreamEvent =
  | {
      type: 'chunk';
      /** The parsed JSON object of the `data:` line, unchanged. */
      data: Record<string, unknown>;
      /** Content text of choice 0 in this chunk ("" when none). Completions: choices[0].text. */
      text: string;
      /** Reasoning text (reasoning_content / reasoning) in this chunk. */
      reasoning: string;
      /** Token ids when the engine sends them (vLLM token_ids). */
      tokenIds?: number[];
      finishReason?: string;
      /** Usage if this chunk carries it (non-zero). */
      usage?: TokenUsage;
      /** true when `choices` is empty or missing (usage-only chunks and the like). */
      emptyChoices: boolean;
      /**
       * The `data:` text as the engine sent it, and `data.model` as parsed from it: relayed as they are
       * (sse.ts chunkJson) instead of stringifying `data` again. Valid while `data` is unchanged but for
       * `model` (which the runner rewrites to the id clients asked for).
       */
      raw?: string;
      rawModel?: unknown;
    }
  | {
      type: 'error';
      message: string;
      statusCode?: number;
      /** The connection to the engine broke (reset, closed early): the engine may be gone. */
      connectionLost?: boolean;
    }
  | {
      type: 'end';
      /** Saw `data: [DONE]`. */
      sawDone: boolean;
      /** Ended without [DONE] and without any finish_reason: the answer was cut. */
      truncated: boolean;
      /** Final usage by the engine's rules (last non-zero; llama.cpp timings), if any. */
      usage?: TokenUsage;
    };

export class EngineHttpError extends Error {
  constructor(
    message: string,
    /** HTTP status from the engine, or 502 when the engine could not be reached, 504 on timeout. */
    readonly statusCode: number,
    /** The engine's JSON error body when it sent one. */
    readonly body?: unknown,
    /** No HTTP answer at all: the socket error code (ECONNREFUSED: nothing listens; ECONNRESET…). */
    readonly unreachable?: string,
    /** The status the engine did answer with, when the failure came after it (a body that is not JSON, or broke off). */
    readonly answered?: number,
  ) {
    super(message);
    this.name = 'EngineHttpError';
  }
}

/** Where a request goes on the engine: the OpenAI paths, and Ollama's native load call. */
export type EnginePath =
  '/v1/chat/completions' | '/v1/completions' | '/v1/embeddings' | '/v1/images/generations' | '/v1/audio/transcriptions' | '/api/generate';

export interface EngineRequestOptions {
  endpoint: EngineEndpoint;
  path: EnginePath;
  /** The OpenAI-style body. The client applies local_model substitution; callers pass it as received. */
  body: Record<string, unknown>;
  signal?: AbortSignal;
  /**
   * A stream: the longest wait for response headers (then 504). A non-stream call: engines send headers only
   * with the whole answer, so passing it is no failure by itself; onHeadersOverdue is told, and the call
   * waits on until totalTimeoutMs.
   */
  headersTimeoutMs?: number;
  /** The longest a whole call may take, headers and body, stream or not (then 504). */
  totalTimeoutMs?: number;
  /** Called once when no headers came within headersTimeoutMs (the engine may be frozen). */
  onHeadersOverdue?(afterMs: number): void;
}

export interface NonStreamResult {
  statusCode: number;
  json: unknown;
  usage?: TokenUsage;
}
