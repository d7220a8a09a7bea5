// Runs one stream-v1 request through the InferenceRunner (shared scheduler, engine, request book) and
// turns what comes back into numbered messages: delta {seq, text_chunk, token_ids?, resume_token} per
// engine chunk, then complete or error. Reading from the engine waits while the stream has no room,
// so a client that does not ack (or is away too long) pauses the engine itself.
import type { InferenceResult, InferenceRunner } from '../inference/runner';
import type { Logger } from '../base/log';
import { resultError } from './errors';
import type { ResumeTokens } from './resume-token';
import type { StreamRegistry } from './stream-registry';
import type { StreamState } from './stream-state';

export interface RunDeps {
  runner: InferenceRunner;
  tokens: ResumeTokens;
  registry: StreamRegistry;
  log: Logger;
  resumeTtlMs: number;
}

/** The id the request has in the console and the ledger (client ids are only unique per key). */
export function internalId(s: StreamState): string {
  return `${s.keyName}/${s.requestId}`;
}

export function resumeToken(deps: RunDeps, s: StreamState, lastSeq: number): string {
  return deps.tokens.sign({ requestId: s.requestId, keyId: s.keyId, lastSeq, expiresAt: Date.now() + deps.resumeTtlMs });
}

/** Starts the request; `release` frees the key's concurrency slot when it ends. Never throws. */
export function runStream(deps: RunDeps, state: StreamState, body: Record<string, unknown>, release: () => void): void {
  const request_id = state.requestId;
  const settle = (build: (seq: number) => Record<string, unknown>, urgent = false) => {
    release();
    if (state.isClosed) return;
    state.finish(build, urgent);
    deps.registry.schedule(state);
  };
  deps.runner
    .run(
      {
        id: internalId(state),
        purpose: 'gateway',
        operation: body.messages === undefined ? 'completions' : 'chat/completions',
        model: state.model,
        body,
        stream: true,
        signal: state.controller.signal,
      },
      {
        accepted: (queuePosition) => state.sendDirect({ type: 'accepted', request_id, queue_position: queuePosition }),
        chunk: async (ev) => {
          const ids = ev.tokenIds && ev.tokenIds.length > 0 ? ev.tokenIds : undefined;
          if (!ev.text && !ev.reasoning && !ids) return;
          state.push((seq) => ({
            type: 'delta',
            request_id,
            seq,
            text_chunk: ev.text,
            ...(ev.reasoning ? { reasoning_chunk: ev.reasoning } : {}),
            ...(ids ? { token_ids: ids } : {}),
            resume_token: resumeToken(deps, state, seq),
          }));
          await state.waitForRoom();
        },
      },
    )
    .then(
      (r: InferenceResult) => {
        if (r.status === 'ok') {
          settle((seq) => ({
            type: 'complete',
            request_id,
            seq,
            finish_reason: r.finishReason ?? 'stop',
            usage: { prompt_tokens: r.tokensIn, completion_tokens: r.tokensOut, total_tokens: r.tokensIn + r.tokensOut, estimated: r.estimated },
          }));
          return;
        }
        const e = resultError(r);
        const byClient = state.cancelledByClient;
        settle(
          (seq) => ({
            type: 'error',
            request_id,
            seq,
            code: byClient ? 'cancelled' : e.code,
            kind: byClient ? 'cancelled' : e.kind,
            message: byClient ? 'Cancelled at your request; the engine stopped generating.' : e.message,
            ...(e.retryAfterMs !== undefined && !byClient
              ? { retry_after: Math.max(1, Math.ceil(e.retryAfterMs / 1000)), retry_after_ms: e.retryAfterMs }
              : {}),
          }),
          byClient,
        );
      },
      (err: unknown) => {
        deps.log.error(`stream ${request_id} failed inside the gateway: ${(err as Error).message}`, { requestId: request_id });
        settle((seq) => ({
          type: 'error',
          request_id,
          seq,
          code: 'internal_error',
          kind: 'internal',
          message: `The gateway failed: ${(err as Error).message}`,
        }));
      },
    );
}
