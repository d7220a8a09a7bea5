// One state per engine endpoint. Discovery looks at an address every 30 s (or on Rescan); the health
// monitor looks at the endpoints of served models every interval and, after a failure, within a second.
// Where both have a view, the newer and more specific one (health's) wins, so the Engines list, the
// models table and the verdict never say "reachable" beside "not running".
import type { EndpointCondition, EngineInfo, ModelHealth } from '../../shared/types';
import type { EndpointHealth } from '../engine-client/health';
import { endpointKey } from '../engine-client/url';

/** Discovery's engines as the console shows them: health's verdict on an endpoint it watches overrides. */
export function engineView(engines: EngineInfo[], health: EndpointHealth[]): EngineInfo[] {
  const byUrl = new Map(health.map((h) => [endpointKey(h.url), h]));
  return engines.map((e) => {
    const h = byUrl.get(endpointKey(e.url));
    if (!h?.lastCheckAt) return e;
    const { error: _e, loading: _l, ...rest } = e;
    if (h.condition === 'down') return { ...rest, reachable: false, ...(h.lastError ? { error: h.lastError } : {}) };
    if (h.condition === 'loading') return { ...rest, reachable: false, loading: true, ...(h.lastError ? { error: h.lastError } : {}) };
    if (h.health === 'healthy') return { ...rest, reachable: true, lastSeen: Math.max(e.lastSeen ?? 0, h.lastCheckAt) };
    // Degraded or a refused key: the engine answers, so it is reachable; the reason is shown beside it.
    return { ...e, reachable: true, ...(h.lastError ? { error: h.lastError } : {}) };
  });
}

export interface EndpointHealthState {
  url: string;
  health: ModelHealth;
  lastError?: string;
  condition?: EndpointCondition;
}

/**
 * The health of every endpoint the registry holds: the monitor's where it has checked one (a served
 * model's), else discovery's (an engine that does not answer is down, with discovery's reason).
 */
export function endpointStates(urls: string[], monitored: EndpointHealth[], engines: EngineInfo[]): EndpointHealthState[] {
  const out = new Map<string, EndpointHealthState>();
  for (const h of monitored) {
    if (!h.lastCheckAt) continue; // not looked at yet: discovery's look is all there is
    out.set(endpointKey(h.url), {
      url: h.url,
      health: h.health,
      ...(h.lastError ? { lastError: h.lastError } : {}),
      ...(h.condition ? { condition: h.condition } : {}),
    });
  }
  const engineAt = new Map(engines.map((e) => [endpointKey(e.url), e]));
  for (const url of urls) {
    if (out.has(url)) continue;
    const e = engineAt.get(url);
    if (e && !e.reachable)
      out.set(url, { url, health: 'unhealthy', condition: e.loading ? 'loading' : 'down', lastError: e.error ?? `the engine at ${url} does not answer` });
  }
  return [...out.values()];
}
