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
  /** The GPUs it pauses on a rig with several; absent: the whole rig. */
  gpus?: number[];
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

/**
 * Where an update stands, stable (docs/error-codes.md): what the check found, then the download, its
 * checksum, and whether it waits for the requests in flight. The console shows each with its evidence.
 */
export type UpdateStateCode =
  | 'update_up_to_date'
  | 'update_available'
  | 'update_check_failed'
  | 'update_downloading'
  | 'update_downloaded'
  | 'update_held_requests_in_flight'
  | 'update_ready'
  | 'update_checksum_mismatch'
  | 'update_too_large'
  | 'update_no_asset'
  | 'update_no_checksums'
  | 'update_unsigned'
  | 'update_signature_invalid'
  | 'update_download_failed';

/** What the update check found. It never downloads anything. */
export interface UpdateCheckView {
  current: string;
  latest?: string;
  available: boolean;
  feed: string;
  /** Which shape the feed has: the release channel (GitHub Releases, decision 0010), npm metadata, or a latest.yml folder. */
  channel?: 'github' | 'npm' | 'generic';
  checkedAt: number;
  /** update_up_to_date, update_available or update_check_failed. */
  code?: UpdateStateCode;
  error?: string;
  /** Why the check failed, stable (UpdateCheckErrorCode in src/core/update/check.ts); absent when it did not. */
  errorCode?:
    'feed_not_found' | 'feed_http_error' | 'feed_too_large' | 'feed_unreadable' | 'bad_version' | 'feed_timeout' | 'feed_unreachable' | 'feed_refused_address';
  /** The release channel's newest release: its tag and page, the file for this system, whether it lists SHA256SUMS. */
  release?: { tag: string; page?: string; asset?: { name: string; size: number }; checksums: boolean };
  /** Where the download of a newer version stands (the desktop app's, or the agent's on the release channel). */
  download?: UpdateDownloadView;
}

/**
 * A newer version's file: fetched (desktop: in the background; the console: when the owner presses
 * Download; `swan-provider update`), checked against the release's SHA256SUMS, then held while any request
 * is in flight and ready once the last one finished. Installed only when the owner says so.
 */
export interface UpdateDownloadView {
  state: 'available' | 'downloading' | 'downloaded' | 'held' | 'ready' | 'error';
  version: string;
  /** Stable: update_downloading, update_downloaded, update_held_requests_in_flight, update_ready, or why it failed. */
  code?: UpdateStateCode;
  /** 0-100 while downloading. */
  percent?: number;
  /** The owner chose to install when the app quits. */
  installOnQuit: boolean;
  error?: string;
  /** The verified file (0600, in <home>/updates), its name and its sha256 as SHA256SUMS lists it. */
  file?: string;
  sha256?: string;
  bytes?: number;
  /**
   * verified: SHA256SUMS carried a signature by a trusted release key (`signedBy` names it); not_checked: no
   * release key is configured here, so only the checksum list was checked (never said as signed).
   */
  signature?: 'verified' | 'not_checked';
  signedBy?: string;
  /** Held: the requests running when it was held. */
  inFlight?: number;
  /** Ready on the headless agent: the exact command that installs the verified file (not run for the owner). */
  command?: string;
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
