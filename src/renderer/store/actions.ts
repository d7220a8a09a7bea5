// State changes, as plain functions the bridge listener and the pages call.
import type { BridgeEvent } from '../../shared/bridge/events';
import type { AgentSnapshot, HubNoticeView } from '../../shared/views/snapshot';
import type { SettingsView, UpdateDownloadView } from '../../shared/views/settings';
import type { GpuSample, LogEntry, ModelState, PauseState, RequestView } from '../../shared/types';
import type { ConnectionStatus } from '../bridge/connection';
import type { Alert } from '../../shared/alerts';
import { RequestList } from './request-list';
import { LiveSeries } from './series';
import { useStore, type LogLevel, type Notice } from './store';
import { joinFetched, TextCache } from './text-cache';

export const series = new LiveSeries();
export const texts = new TextCache();
const requestList = new RequestList();

export const MAX_LOGS = 2000;
const LEVEL_RANK: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };

export function setConnection(connection: ConnectionStatus): void {
  useStore.setState({ connection });
}

export function setLoadError(loadError: string | null): void {
  useStore.setState({ loadError });
}

export function needsOnboarding(s: AgentSnapshot): boolean {
  return !s.hasKey || !s.onboarded;
}

export function setSnapshot(snapshot: AgentSnapshot): void {
  useStore.setState((s) => ({ snapshot, appState: 'loaded', loadError: null, onboarding: s.onboarding || needsOnboarding(snapshot) }));
}

/** The owner pressed "Start serving" and the agent agreed. */
export function finishOnboarding(snapshot: AgentSnapshot): void {
  useStore.setState({ snapshot, appState: 'loaded', onboarding: needsOnboarding(snapshot) });
}

export function setSettings(settings: SettingsView): void {
  useStore.setState({ settings });
}

export function setModels(models: ModelState[]): void {
  const s = useStore.getState().snapshot;
  if (s) useStore.setState({ snapshot: { ...s, models } });
}

export function setPause(pause: PauseState): void {
  const s = useStore.getState().snapshot;
  if (s) useStore.setState({ snapshot: { ...s, pause } });
}

export function setEngines(engines: AgentSnapshot['engines']): void {
  const s = useStore.getState().snapshot;
  if (s) useStore.setState({ snapshot: { ...s, engines } });
}

export function loadHistory(samples: GpuSample[]): void {
  const sorted = samples.slice().sort((a, b) => a.ts - b.ts);
  let recorded = 0;
  for (const s of sorted) if (series.record(s)) recorded++;
  const last = sorted[sorted.length - 1];
  if (recorded > 0 && last)
    useStore.setState((st) => ({ seriesVersion: st.seriesVersion + 1, lastSample: st.lastSample && st.lastSample.ts > last.ts ? st.lastSample : last }));
}

export function resetRequests(list: RequestView[]): void {
  useStore.setState({ requests: requestList.reset(list) });
}

export function selectRequest(id: string | null): void {
  texts.pin(id);
  useStore.setState({ selectedRequestId: id });
}

/** Text fetched for a request, joined with deltas that arrived meanwhile (see joinFetched). */
export function setFetchedText(id: string, fetched: string, receivedDuringFetch: string): void {
  texts.set(id, joinFetched(fetched, receivedDuringFetch));
  useStore.setState((s) => ({ textVersion: s.textVersion + 1 }));
}

export function setLogs(logs: LogEntry[], level: LogLevel): void {
  useStore.setState({ logs: logs.slice(-MAX_LOGS), logLevel: level });
}

/** Hub notices kept in the console (the agent keeps its own last 50 in the home folder). */
export const MAX_HUB_NOTICES = 50;

export function setProviderStatus(providerStatus: NonNullable<AgentSnapshot['providerStatus']>): void {
  const s = useStore.getState().snapshot;
  if (s) useStore.setState({ snapshot: { ...s, providerStatus } });
}

export function setHubNotices(list: HubNoticeView[]): void {
  useStore.setState({ hubNotices: list.slice(0, MAX_HUB_NOTICES) });
}

let noticeId = 0;
export function notify(kind: Notice['kind'], text: string): void {
  const id = ++noticeId;
  useStore.setState((s) => ({ notices: [...s.notices.slice(-4), { id, kind, text }] }));
  setTimeout(() => dismissNotice(id), kind === 'error' ? 8000 : 4000);
}

export function dismissNotice(id: number): void {
  useStore.setState((s) => ({ notices: s.notices.filter((n) => n.id !== id) }));
}

/** Applies one batch from the bridge in a single state update. */
export function applyEvents(events: BridgeEvent[]): void {
  let snapshot: AgentSnapshot | undefined;
  let sampled = false;
  let lastSample: GpuSample | undefined;
  const updates: RequestView[] = [];
  const newLogs: LogEntry[] = [];
  let textChanged = false;
  const hubNotices: HubNoticeView[] = [];
  let updateDownload: UpdateDownloadView | undefined;
  for (const e of events) {
    switch (e.type) {
      case 'snapshot':
        snapshot = e.snapshot;
        break;
      case 'gpu.sample':
        if (series.record(e.sample)) {
          sampled = true;
          lastSample = e.sample;
        }
        break;
      case 'request.update':
        updates.push(e.request);
        break;
      case 'request.text':
        texts.append(e.id, e.delta);
        textListeners.forEach((l) => l(e.id, e.delta));
        textChanged = true;
        break;
      case 'log':
        newLogs.push(e.entry);
        break;
      case 'notice':
        hubNotices.unshift(e.notice);
        break;
      case 'alert':
        alertListeners.forEach((l) => l(e.alert));
        break;
      case 'update.download':
        updateDownload = e.download;
        break;
    }
  }
  useStore.setState((s) => {
    const next: Partial<typeof s> = {};
    if (snapshot) {
      next.snapshot = snapshot;
      next.appState = 'loaded';
      next.loadError = null;
      next.onboarding = s.onboarding || needsOnboarding(snapshot);
    }
    if (sampled) {
      next.seriesVersion = s.seriesVersion + 1;
      next.lastSample = lastSample ?? null;
    }
    if (updateDownload) next.updateDownload = updateDownload;
    if (updates.length) next.requests = requestList.apply(updates);
    if (textChanged) next.textVersion = s.textVersion + 1;
    if (hubNotices.length) next.hubNotices = [...hubNotices, ...s.hubNotices.filter((n) => !hubNotices.some((h) => h.id === n.id))].slice(0, MAX_HUB_NOTICES);
    if (newLogs.length) {
      const min = LEVEL_RANK[s.logLevel];
      const kept = newLogs.filter((l) => LEVEL_RANK[l.level] >= min);
      if (kept.length) next.logs = [...s.logs, ...kept].slice(-MAX_LOGS);
    }
    return next;
  });
}

type AlertListener = (alert: Alert) => void;
const alertListeners = new Set<AlertListener>();

/** Hears each alert the agent raises (browser notifications and the alerts card use it). */
export function onAlert(cb: AlertListener): () => void {
  alertListeners.add(cb);
  return () => alertListeners.delete(cb);
}

type TextListener = (id: string, delta: string) => void;
const textListeners = new Set<TextListener>();

/** Hears raw text deltas (the Requests page uses it while it fetches a request's text). */
export function onTextDelta(cb: TextListener): () => void {
  textListeners.add(cb);
  return () => textListeners.delete(cb);
}

export function settingsTheme(settings: SettingsView | null): SettingsView['theme'] {
  return settings?.theme ?? 'system';
}
