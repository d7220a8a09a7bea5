// What a request asks the engine to do, and where it goes. The hub sends chat, embedding, image and
// transcription work as the same `inference` message; a v0.5 hub says which in `operation` (the OpenAI path
// after /v1/, which is also where the request is forwarded: Go's operations.go). Without it the model's
// category decides (models.json `category`), and only a model with no telling category falls back to the
// request's shape. 'completions' (the legacy text completion) is ours: the local gateway and the dev hub
// declare it for a prompt sent to /v1/completions; the hub's four operations never resolve to it.
import type { EnginePath } from '../engine-client/types';
import { categoryOperation, type Operation } from '../engine-client/category';

export { categoryOperation, chatCompatible, type Operation } from '../engine-client/category';

export const OPERATIONS: readonly Operation[] = ['chat/completions', 'completions', 'embeddings', 'images/generations', 'audio/transcriptions'];

export function isOperation(v: unknown): v is Operation {
  return typeof v === 'string' && (OPERATIONS as readonly string[]).includes(v);
}

/** The hub's statement wins; then the model's category; then the request's shape; chat by default. */
export function resolveOperation(declared: unknown, category: string | undefined, body: Record<string, unknown>): Operation {
  if (isOperation(declared)) return declared;
  const byCategory = categoryOperation(category);
  if (byCategory) return byCategory;
  if ('messages' in body) return 'chat/completions';
  if ('file' in body) return 'audio/transcriptions';
  if ('input' in body) return 'embeddings';
  if ('prompt' in body) return 'images/generations';
  return 'chat/completions';
}

/** Only chat and text completions stream; every other answer comes back whole, on the result path. */
export function streams(op: Operation): boolean {
  return op === 'chat/completions' || op === 'completions';
}

export function enginePath(op: Operation): EnginePath {
  return `/v1/${op}`;
}
