// The deep health check's one-token chat, read. GET /v1/models is served from a static list on most engines,
// so it keeps answering after the engine behind it died (vLLM's EngineDeadError behind a live FastAPI): the
// model reads healthy while every request fails. A real completion sees it. Which failure it was decides
// what the owner does (Go's model_health_deepcheck_test.go): no answer (start the engine), the key refused
// (fix api_key), the model not served there (fix local_model), the engine failing (restart it). A 400, 422
// or 429 is the engine's opinion of the prompt or its load, not of its health: not counted.

/** One model on one endpoint, by the engine's own name. */
export interface DeepTarget {
  url: string;
  /** The engine's own name of the model (local_model), never the hub id. */
  model: string;
  apiKey?: string;
}

/** What the probe got: the HTTP status (0: no answer) and the engine's error text. */
export interface ProbeAnswer {
  status: number;
  error?: string;
  /** Every slot of the endpoint is taken: not probed this time. */
  busy?: boolean;
}

/**
 * Asks one model on one endpoint for one token (through the engine-call service, purpose 'health').
 * overCap: the endpoint is under suspicion, so the chat runs even when every slot is taken (the calls in
 * them may be what hangs); otherwise a full endpoint is not probed (busy).
 */
export type DeepProbe = (t: DeepTarget, o?: { overCap?: boolean }) => Promise<ProbeAnswer>;

/** Stable reason codes of a failed deep check. */
export type DeepFailure = 'no_response' | 'key_rejected' | 'not_served' | 'engine_error' | 'loading';

export type ProbeVerdict =
  { ok: true; /** A status that does not count (400, 422, 429), for the log. */ ignored?: number } | { ok: false; code: DeepFailure; error: string };

/** The body of a 1-token chat probe: one user word (an empty prompt is refused by some chat templates). */
export function probeBody(model: string): Record<string, unknown> {
  return { model, messages: [{ role: 'user', content: 'ping' }], max_tokens: 1 };
}

export function readProbe(a: ProbeAnswer, t: DeepTarget): ProbeVerdict {
  const s = a.status;
  const detail = (a.error ?? '').replace(/\s+/g, ' ').trim().slice(0, 200);
  const what = `a 1-token chat to "${t.model}" at ${t.url}`;
  if (s >= 200 && s < 300) return { ok: true };
  if (s === 0)
    return {
      ok: false,
      code: 'no_response',
      error: `no response from the engine to ${what} (${detail || 'no answer'}); check that it is running and not stuck`,
    };
  if (s === 401 || s === 403) {
    const fix = t.apiKey
      ? "the api_key in models.json does not match the engine's key; fix it"
      : 'the engine needs a key: set "api_key" for this endpoint in models.json';
    return { ok: false, code: 'key_rejected', error: `engine refuses our key: ${what} answered ${s}; ${fix}` };
  }
  if (s === 404)
    return {
      ok: false,
      code: 'not_served',
      error: `the model is not served at this endpoint: ${what} answered 404 (${detail}); check local_model in models.json`,
    };
  if (s === 503 && /loading model/i.test(detail))
    return { ok: false, code: 'loading', error: `the engine at ${t.url} is loading its model (503 Loading model); it serves once loaded` };
  if (s >= 500)
    return {
      ok: false,
      code: 'engine_error',
      error: `engine error: ${what} answered ${s}${detail ? ` (${detail})` : ''} although it lists its models; restart the engine`,
    };
  return { ok: true, ignored: s };
}
