// The UI state. Live data arrives from the bridge listener (sync.ts) through the module functions in
// actions.ts; components read with selectors. Bounded series and lists live in series.ts,
// request-list.ts and text-cache.ts; the store carries version counters that re-render their readers.
import { create } from 'zustand';
import type { AgentSnapshot, HubNoticeView } from '../../shared/views/snapshot';
import type { SettingsView, UpdateDownloadView } from '../../shared/views/settings';
import type { GpuSample, LogEntry, RequestView } from '../../shared/types';
import type { ConnectionStatus } from '../bridge/connection';

export type LogLevel = LogEntry['level'];

export interface Notice {
  id: number;
  kind: 'info' | 'error';
  text: string;
}

export interface State {
  /** 'loaded' once the first snapshot arrived (the e2e readiness marker). */
  appState: 'loading' | 'loaded';
  connection: ConnectionStatus;
  /** Why the first load failed, when it did. */
  loadError: string | null;
  snapshot: AgentSnapshot | null;
  /**
   * Onboarding is shown from the moment a snapshot needs it until the owner presses "Start serving",
   * even if saving the key already made the agent count as onboarded.
   */
  onboarding: boolean;
  settings: SettingsView | null;
  lastSample: GpuSample | null;
  /** Bumped on every recorded sample (series.ts holds the points). */
  seriesVersion: number;
  requests: RequestView[];
  selectedRequestId: string | null;
  /** Bumped when any cached request text changes (text-cache.ts holds it). */
  textVersion: number;
  logs: LogEntry[];
  logLevel: LogLevel;
  notices: Notice[];
  /** What the hub told this provider (newest first); loaded on every (re)connect, so it survives a reload. */
  hubNotices: HubNoticeView[];
  /** Desktop app: the owner-approved update download, as main last reported it. */
  updateDownload: UpdateDownloadView | null;
}

export const useStore = create<State>()(() => ({
  appState: 'loading',
  connection: 'connecting',
  loadError: null,
  snapshot: null,
  onboarding: false,
  settings: null,
  lastSample: null,
  seriesVersion: 0,
  requests: [],
  selectedRequestId: null,
  textVersion: 0,
  logs: [],
  logLevel: 'info',
  notices: [],
  hubNotices: [],
  updateDownload: null,
}));
