// Turns the agent's own state changes into alerts: the hub link dropping or refusing the key, an
// engine endpoint going unhealthy, serving pausing by itself, and notices from the hub. Each source is
// an emitter the Agent already has; notices come through a small adapter (see notice-source.ts).
import type { EventEmitter } from 'node:events';
import type { ProviderStatusView } from '../../shared/views/snapshot';
import type { LinkStatus, PauseState } from '../../shared/types';
import type { AlertList } from './alert-list';
import type { HubNotice, NoticeSource } from './notice-source';

export interface AlertSources {
  link: Pick<EventEmitter, 'on' | 'off'>; // 'state' (LinkStatus)
  health: Pick<EventEmitter, 'on' | 'off'>; // 'change' ({ url, health, error? })
  pause: Pick<EventEmitter, 'on' | 'off'>; // 'change' (PauseState)
  notices?: NoticeSource;
  /** The platform's status check ('change' with ProviderStatusView): an invalid key is refused before any dial. */
  providerStatus?: Pick<EventEmitter, 'on' | 'off'>;
  /** Self-healing ('change' with { model, withdrawn, reason, detail }): a model withdrawn from the hub, and back. */
  selfHeal?: Pick<EventEmitter, 'on' | 'off'>;
}

const WITHDRAW_CAUSE: Record<string, string> = {
  probe_failures: 'its real probes kept failing',
  error_rate: 'most of its requests failed while its health checks passed',
};

const PAUSE_CAUSE: Record<string, string> = {
  gpu_busy: 'another program is using the GPU',
  gpu_hot: 'a GPU is over the temperature or power ceiling you set',
  schedule: 'your pause schedule started',
};

/** Subscribes; returns a function that unsubscribes everything. */
export function watchForAlerts(src: AlertSources, alerts: AlertList): () => void {
  let linkWas: LinkStatus['state'] = 'idle';
  const onLink = (st: LinkStatus): void => {
    const was = linkWas;
    linkWas = st.state;
    if (st.state === was) return;
    if (st.state === 'auth_failed') {
      alerts.raise(
        'key_refused',
        'The hub refused your provider key',
        `${st.reason ?? 'The key was not accepted.'} Paste a valid key in Settings; the agent retries when the key changes.`,
      );
    } else if (was === 'connected' && (st.state === 'backoff' || st.state === 'connecting' || st.state === 'registering')) {
      alerts.raise(
        'link_down',
        'Hub connection lost',
        `${st.reason ?? 'The connection to the hub dropped.'} The agent reconnects by itself; no requests arrive until it does.`,
      );
    }
  };
  const unhealthy = new Set<string>();
  const onHealth = (c: { url: string; health: string; error?: string }): void => {
    if (c.health !== 'unhealthy') {
      // Only an engine the owner was told is down is news when it answers again (Go: model_recovered).
      if (unhealthy.delete(c.url) && c.health === 'healthy')
        alerts.raise('engine_back', 'An engine answers again', `${c.url} is healthy again; its models are served again.`);
      return;
    }
    if (unhealthy.has(c.url)) return;
    unhealthy.add(c.url);
    alerts.raise(
      'engine_down',
      'An engine stopped answering',
      `${c.url} is unhealthy${c.error ? `: ${c.error}` : ''}. Its models are no longer served; check that the engine is running.`,
    );
  };
  let pausedWas = false;
  const onPause = (p: PauseState): void => {
    const was = pausedWas;
    pausedWas = p.paused;
    if (!p.paused || was || p.cause === 'manual' || p.cause === undefined) return;
    alerts.raise(
      'auto_paused',
      'Serving paused by itself',
      `Serving paused because ${PAUSE_CAUSE[p.cause] ?? p.cause}${p.reason ? ` (${p.reason})` : ''}. It resumes on its own.`,
    );
  };
  let statusWas: ProviderStatusView['state'] | undefined;
  const onStatus = (v: ProviderStatusView): void => {
    const was = statusWas;
    statusWas = v.state;
    if (v.state !== 'invalid_key' || was === 'invalid_key') return;
    alerts.raise(
      'key_refused',
      'The network refused your provider key',
      `${v.message ?? 'The key was not accepted.'} Paste a valid key in Settings; the agent checks again when the key changes.`,
    );
  };
  const onSelfHeal = (c: { model: string; withdrawn: boolean; reason: string; detail: string }): void => {
    if (c.withdrawn) {
      alerts.raise(
        'model_withdrawn',
        `${c.model} withdrawn from the network`,
        `${c.model} was withdrawn from the hub because ${WITHDRAW_CAUSE[c.reason] ?? c.reason} (${c.detail}). It is announced again by itself once a real probe passes; check its engine and its entry in models.json.`,
      );
    } else {
      alerts.raise('model_back', `${c.model} is served again`, `${c.model} passed its real probe (${c.detail}) and is announced to the hub again.`);
    }
  };
  const onNotice = (n: HubNotice): void => {
    alerts.raise('hub_notice', n.title ? `Hub notice: ${n.title}` : 'Notice from the hub', n.message);
  };
  src.link.on('state', onLink);
  src.health.on('change', onHealth);
  src.pause.on('change', onPause);
  src.providerStatus?.on('change', onStatus);
  src.selfHeal?.on('change', onSelfHeal);
  const offNotices = src.notices?.(onNotice);
  return () => {
    src.link.off('state', onLink);
    src.health.off('change', onHealth);
    src.pause.off('change', onPause);
    src.providerStatus?.off('change', onStatus);
    src.selfHeal?.off('change', onSelfHeal);
    offNotices?.();
  };
}
