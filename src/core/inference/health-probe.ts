// The deep health check's engine call: a one-token chat to one model on one endpoint, through the
// engine-call service with the purpose 'health' (a free slot of that endpoint or none, whatever its health
// or a pause; never booked, billed or counted in the heartbeat), answered as the health monitor reads it.
import { probeBody, type DeepProbe } from '../engine-client/deep-probe';
import type { ModelRegistry } from '../models/registry';
import { AgentLog } from '../base/log';
import { RequestBook } from './requests';
import { InferenceRunner } from './runner';

/** Go's DeepCheckTimeout: a cold or loaded engine can take seconds for its first token. */
export const DEEP_CHECK_TIMEOUT_MS = 30_000;

export function healthProbe(runner: Pick<InferenceRunner, 'run'>, timeoutMs = DEEP_CHECK_TIMEOUT_MS): DeepProbe {
  return async (t, o) => {
    const r = await runner.run({
      ...(o?.overCap ? { overCap: true } : {}),
      purpose: 'health',
      model: t.model,
      target: { url: t.url, ...(t.apiKey ? { apiKey: t.apiKey } : {}) },
      operation: 'chat/completions',
      body: probeBody(t.model),
      stream: false,
      signal: new AbortController().signal,
      timeoutMs,
    });
    if (r.status === 'ok') return { status: r.statusCode };
    if (r.status === 'rejected') return { status: r.statusCode, busy: true, ...(r.error ? { error: r.error } : {}) };
    if (r.noAnswer) return { status: 0, error: r.noAnswer === 'timeout' ? `no answer within ${Math.round(timeoutMs / 1000)} s` : r.noAnswer };
    return { status: r.engineStatus ?? r.statusCode, ...(r.error ? { error: r.error } : {}) };
  };
}

/**
 * The same probe for a tool without a running agent (doctor): a service of its own, with nothing else to
 * share the endpoint's slots with, that books nothing.
 */
export function standaloneHealthProbe(registry: ModelRegistry, timeoutMs = DEEP_CHECK_TIMEOUT_MS): DeepProbe {
  const runner = new InferenceRunner({
    registry,
    admit: () => Promise.reject(new Error('a standalone probe admits nothing but health checks')),
    book: new RequestBook(),
    log: new AgentLog({ console: false }).child('health'),
  });
  return healthProbe(runner, timeoutMs);
}
