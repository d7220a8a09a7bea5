// What the Settings page and the first run read: the settings as the owner sees them (never the key), the
// answer to a save and a key check, the update check, the app's version, console sessions and gateway keys.

export interface SettingsView {
  hubUrl: string;
  serviceUrl: string;
  nodeName: string;
  /** The key itself never leaves the agent; only whether one is set and where it is kept. */
  keySet: boolean;
  keyStorage: 'keychain' | 'file' | 'config' | 'env' | 'none';
  gatewayEnabled: boolean;
  gatewayListen: string;
  startAtLogin: boolean;
  closeToTray: boolean;
  theme: 'system' | 'light' | 'dark';
  autoPauseOnGpuBusy: boolean;
  /** Guard rails, 0 when off: °C and W per GPU. */
  gpuTemperatureCeilingC: number;
  gpuPowerCeilingW: number;
  /** Weekly windows (local time) during which serving pauses by itself. */
  pauseSchedule: PauseWindowView[];
  retentionDays: number;
  /** Alerts: '' = no webhook; one alert per kind per cooldown. */
  alertWebhookUrl: string;
  alertCooldownMinutes: number;
  /** Alerts by e-mail: '' = none. The SMTP server as smtp(s)://user@host:port; its password is never shown. */
  alertEmailTo: string;
  alertSmtpServer: string;
  alertSmtpPasswordSet: boolean;
  desktopNotifications: boolean;
  /** Where the update check looks ('' = the default feed). */
  updateFeedUrl: string;
  /** Engine addresses added in the console (engines.addEndpoint): the ones the console can remove. */
  addedEndpoints: string[];
}

/** days: 0 = Sunday … 6 = Saturday; from/to "HH:MM"; to before from runs past midnight; equal = all day. */
export interface PauseWindowView {
  days: number[];
  from: string;
  to: string;
}

/**
 * A save that would send the saved provider key to a new host (or over plain ws:// / http:// to another
 * machine) without the key typed again in the same patch is not a SaveResult: it is refused with a
 * BridgeError `OWNER_CONFIRMATION_REQUIRED` carrying the approval, and applied when the owner approves.
 */
export type SaveResult =
  | {
      ok: true;
      /** Per field: saved, but worth saying (a hub or service URL over plain ws:// / http:// to another machine). */
      warnings?: Record<string, string>;
    }
  | { ok: false; errors: Record<string, string> };

/** What the hub's provider status says about a key beyond valid/invalid (status, onboarding step, next steps). */
export interface KeyStatusDetailView {
  status?: string;
  canConnect?: boolean;
  step?: number;
  totalSteps?: number;
  stepLabel?: string;
  warning?: string;
  nextSteps: string[];
}

/** What the update check found. It never downloads anything. */
export interface UpdateCheckView {
  current: string;
  latest?: string;
  available: boolean;
  feed: string;
  checkedAt: number;
  error?: string;
  /** Why the check failed, stable (UpdateCheckErrorCode in src/core/update/check.ts); absent when it did not. */
  errorCode?: 'feed_not_found' | 'feed_http_error' | 'feed_too_large' | 'feed_unreadable' | 'bad_version' | 'feed_timeout' | 'feed_unreachable' | 'feed_refused_address';
  /** Desktop app with a generic feed only (electron-updater): where the owner-approved download stands. */
  download?: UpdateDownloadView;
}

/** The desktop app's copy of a newer version: fetched only when the owner presses Download, installed
 *  only when they press Restart (or chose "install when I quit"). */
export interface UpdateDownloadView {
  state: 'available' | 'downloading' | 'downloaded' | 'error';
  version: string;
  /** 0-100 while downloading. */
  percent?: number;
  /** The owner chose to install when the app quits. */
  installOnQuit: boolean;
  error?: string;
}

/** The version and build Settings shows. */
export interface AppInfoView {
  version: string;
  build: string;
  mode: 'desktop' | 'headless';
}

/** One browser session of the console, as Settings lists it (nothing in it opens anything). */
export interface ConsoleSessionView {
  /** A public id to name it by (not the cookie, not the page secret). */
  id: string;
  createdAt: number;
  lastUsedAt: number;
  expiresAt: number;
  /** The browser it began in (User-Agent, shortened) and the address it came from. */
  userAgent: string;
  address: string;
  /** The session of the page asking. */
  current: boolean;
}

export interface GatewayKeyView {
  name: string;
  createdAt: number;
  lastUsedAt?: number;
}
