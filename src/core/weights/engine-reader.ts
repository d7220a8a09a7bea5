// The engine metadata reads locate.ts makes (GET /props, /v1/models, /info, /get_model_info; POST
// /api/show), through the one engine HTTP client (engine/http.ts): the engine's key, a timeout, a size cap,
// the bounded JSON reader, and never a thrown error (a failed read is undefined).
import { fetchEngine, jsonObject } from '../engine-client/http';
import type { EngineReader } from './locate';

export function engineReader(timeoutMs = 5000): EngineReader {
  const read = async (url: string, path: string, apiKey: string | undefined, body?: unknown): Promise<Record<string, unknown> | undefined> =>
    jsonObject(
      await fetchEngine({
        url,
        path,
        timeoutMs,
        ...(body !== undefined ? { method: 'POST' as const, body: { json: body } } : {}),
        ...(apiKey ? { apiKey } : {}),
      }),
    );
  return {
    get: (url, path, apiKey) => read(url, path, apiKey),
    post: (url, path, body, apiKey) => read(url, path, apiKey, body),
  };
}
