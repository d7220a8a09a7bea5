// One GET against the platform's HTTP API (https://api.swanchain.io/api/v1/…): a bounded wait
// (10 s, like the Go provider's stats client), a bounded body, JSON or a plain-words error. Never
// throws: callers keep their last good figures on any failure.
import { JSON_LIMITS, parseJson } from '../http/bounded-json';

export interface GetJsonOptions {
  /** Sent as `Authorization: Bearer …` (the provider key) when set. */
  bearer?: string;
  timeoutMs?: number;
  /** Largest body accepted (default 4 MB). */
  maxBytes?: number;
}

export type GetJsonResult = { ok: true; json: unknown; status: number } | { ok: false; error: string; status?: number };

export const PLATFORM_TIMEOUT_MS = 10_000;

/** The API base of a ServiceURL: "https://api.swanchain.io" → "https://api.swanchain.io/api/v1". */
export function apiBase(serviceUrl: string): string {
  const base = serviceUrl.trim().replace(/\/+$/, '');
  return /\/api\/v\d+$/.test(base) ? base : `${base}/api/v1`;
}

export async function getJson(url: string, o: GetJsonOptions = {}): Promise<GetJsonResult> {
  const timeoutMs = o.timeoutMs ?? PLATFORM_TIMEOUT_MS;
  const maxBytes = o.maxBytes ?? 4 * 1024 * 1024;
  let res: Response;
  try {
    res = await fetch(url, {
      headers: { accept: 'application/json', ...(o.bearer ? { authorization: `Bearer ${o.bearer}` } : {}) },
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'error',
    });
  } catch (e) {
    return { ok: false, error: `could not reach ${url} (${reason(e, timeoutMs)})` };
  }
  let text: string;
  try {
    text = await readCapped(res, maxBytes);
  } catch (e) {
    return { ok: false, status: res.status, error: `${url} answered HTTP ${res.status} but the body could not be read (${reason(e, timeoutMs)})` };
  }
  if (res.status !== 200) return { ok: false, status: res.status, error: `${url} answered HTTP ${res.status}` };
  try {
    return { ok: true, status: res.status, json: parseJson(text, JSON_LIMITS.platform) };
  } catch (e) {
    return { ok: false, status: res.status, error: `${url} answered with something that is not JSON we read (${(e as Error).message})` };
  }
}

function reason(e: unknown, timeoutMs: number): string {
  const err = e as Error & { cause?: Error };
  if (err?.name === 'TimeoutError' || err?.name === 'AbortError') return `no answer within ${timeoutMs / 1000} s`;
  return err?.cause?.message ?? err?.message ?? String(e);
}

export async function readCapped(res: Response, maxBytes: number): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      throw new Error(`the body is over ${Math.round(maxBytes / 1024)} KB`);
    }
    parts.push(value);
  }
  return Buffer.concat(parts).toString('utf8');
}
