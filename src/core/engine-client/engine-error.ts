// Reading an engine's error body: OpenAI `{error:{message,code}}`, vLLM legacy `{error:{object,...}}`,
// TGI `{error:{message,http_status_code}}` or `{error:"…",error_type}`, FastAPI `{detail}`, plain text.

export interface EngineErrorInfo {
  message?: string;
  statusCode?: number;
}

function httpStatus(v: unknown): number | undefined {
  const n = typeof v === 'string' && /^\d{3}$/.test(v) ? Number(v) : v;
  return typeof n === 'number' && Number.isInteger(n) && n >= 400 && n <= 599 ? n : undefined;
}

function text(v: unknown): string | undefined {
  if (typeof v === 'string' && v.trim()) return v.trim();
  // FastAPI validation errors: detail is a list of {msg, loc}.
  if (Array.isArray(v)) {
    const msgs = v.map((d) => (d && typeof d === 'object' ? text((d as Record<string, unknown>).msg) : text(d))).filter(Boolean);
    return msgs.length ? msgs.join('; ') : undefined;
  }
  return undefined;
}

/** What an engine's error body says, as far as it can be read. */
export function describeEngineError(body: unknown): EngineErrorInfo {
  if (typeof body === 'string') return { message: text(body) };
  if (!body || typeof body !== 'object') return {};
  const b = body as Record<string, unknown>;
  const err = b.error;
  if (err && typeof err === 'object' && !Array.isArray(err)) {
    const e = err as Record<string, unknown>;
    return { message: text(e.message) ?? text(e.detail), statusCode: httpStatus(e.http_status_code) ?? httpStatus(e.code) ?? httpStatus(b.code) };
  }
  return {
    message: text(err) ?? text(b.message) ?? text(b.detail),
    statusCode: httpStatus(b.http_status_code) ?? httpStatus(b.code) ?? httpStatus(b.status),
  };
}
