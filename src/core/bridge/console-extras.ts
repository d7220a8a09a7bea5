// Console verbs that are not about serving: the test prompt ("Try it" on Engines & models) and the
// version/build Settings shows.
import crypto from 'node:crypto';
import type { AppInfoView } from '../../shared/views/settings';
import type { ModelReport } from '../../shared/views/usage';
import type { TryResult } from '../../shared/views/models';
import type { Engines } from '../engines/engines';
import type { Ledger } from '../ledger/ledger';
import { BridgeError } from '../../shared/bridge-error';

/** At most this many test prompts run at once (each also counts against the model's own limits). */
const MAX_TRIES = 2;

/**
 * Sends a short chat through the engine-call service with the purpose 'try' (admitted, booked as a local
 * request: it shows in Requests; the owner's own test is not usage, so wiring keeps it out of the ledger). Returns at once with the request
 * id; the answer streams to the console as request.update/request.text.
 */
export function startTestPrompt(a: Pick<Engines, 'registry' | 'runner'>, model: string, prompt: string, maxTokens: number): TryResult {
  const m = a.registry.get(model);
  if (!m) throw new BridgeError('not_found', `No model "${model}" is known here. Rescan engines or add it to models.json.`);
  if (!m.enabled) throw new BridgeError('not_ready', `"${model}" is switched off. Switch it on in the Models table to try it.`);
  if (a.runner.inFlight('try') >= MAX_TRIES) throw new BridgeError('busy', 'Two test prompts are already running; wait for one to finish.');
  const id = `try-${crypto.randomUUID()}`;
  void a.runner.run({
    id,
    purpose: 'try',
    operation: 'chat/completions',
    model,
    stream: true,
    body: { model, stream: true, max_tokens: maxTokens, messages: [{ role: 'user', content: prompt }] },
    signal: AbortSignal.timeout(120_000),
  });
  return { id };
}

export function appInfo(version: string, mode: 'desktop' | 'headless'): AppInfoView {
  const electron = process.versions.electron ? `Electron ${process.versions.electron}, ` : '';
  return { version, mode, build: `${electron}Node ${process.versions.node}, ${process.platform}-${process.arch}` };
}

const BUCKETS = 24;

/** One model over the last `hours`, from the ledger's per-model sums and percentiles per bucket. */
export function modelReport(ledger: Ledger | undefined, model: string, hours: number, now = Date.now()): ModelReport {
  const bucketMs = (hours * 3_600_000) / BUCKETS;
  const to = Math.ceil(now / 60_000) * 60_000;
  const from = to - BUCKETS * bucketMs;
  const empty = { requests: 0, errors: 0, earnings: 0, p50LatencyMs: null, p95LatencyMs: null, p50TokensPerSecond: null };
  if (!ledger) return { model, from, to, bucketMs, buckets: [], totals: null };
  const buckets: ModelReport['buckets'] = [];
  for (let i = 0; i < BUCKETS; i++) {
    const start = from + i * bucketMs;
    const m = ledger.topModels(start, start + bucketMs, 10_000).find((x) => x.model === model);
    buckets.push(
      m
        ? {
            start,
            requests: m.requests,
            errors: m.errors,
            earnings: m.earnings,
            p50LatencyMs: m.p50LatencyMs,
            p95LatencyMs: m.p95LatencyMs,
            p50TokensPerSecond: m.p50TokensPerSecond,
          }
        : { start, ...empty },
    );
  }
  const totals = ledger.topModels(from, to, 10_000).find((x) => x.model === model) ?? null;
  return { model, from, to, bucketMs, buckets, totals };
}
