// config.toml is watched as models.json is (models/watch.ts): an edit is read when the file settles. A
// broken edit is refused with the file, the line and what is wrong, and the settings in use stay (before,
// it went unnoticed until the next start exited 2, and a restarting service manager looped). A valid edit
// applies live the settings that are read where they are used, each time; the others are named as
// needing a restart, so the owner is never left to guess whether an edit took.
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from '../base/log';
import { ConfigError, loadConfig, type ProviderConfig } from './config';

export interface ConfigTomlWatch {
  close(): void;
  /** Re-read now (what the watcher does after a change). */
  reload(): ConfigReload;
}

/** What one read of an edited config.toml did: its settings by their names in the file (`Agent.OwnerAddr`). */
export type ConfigReload =
  { result: 'unchanged' } | { result: 'refused'; error: ConfigError } | { result: 'changed'; applied: string[]; restartNeeded: string[] };

/**
 * Settings the agent reads from the config each time it uses them, so an edit applies at once: the node name
 * and the owner address (the next register and announce carry them), the models to serve (the model set is
 * rebuilt), and the engine hosts (the next discovery scan reads them). Every other setting is taken once, at
 * start, by the part it configures (timers, limits, the hub link, the gateway's listener).
 */
const LIVE = ['nodeName', 'models', 'agent.ownerAddr', 'agent.engineHosts'] as const;

/** Editors save in bursts (truncate + write, or write + rename): wait for the file to settle. */
const SETTLE_MS = 150;

/**
 * Calls `changed` once a file of the home settles after an edit (SETTLE_MS after its last event). The folder is
 * watched, not the file, so an editor's write + rename is seen too. A watch that cannot start or stops is said
 * once with what to do; the agent goes on with what it read.
 */
export function watchSettled(dir: string, base: string, label: string, log: Logger, changed: () => void): { close(): void } {
  let timer: NodeJS.Timeout | undefined;
  let watcher: fs.FSWatcher | undefined;
  try {
    watcher = fs.watch(dir, { persistent: false }, (_event, name) => {
      if (name !== null && name !== base) return;
      clearTimeout(timer);
      timer = setTimeout(changed, SETTLE_MS);
      timer.unref();
    });
    watcher.on('error', (e) => log.warn(`${label} is no longer watched (${e.message}); restart to pick up edits`));
  } catch (e) {
    log.warn(`${label} cannot be watched (${(e as Error).message}); restart to pick up edits`);
  }
  return {
    close: () => {
      clearTimeout(timer);
      watcher?.close();
    },
  };
}

/** The config's fields as the file names them: `agent.heartbeatIntervalMs` → `Agent.HeartbeatIntervalSeconds`. */
const TOP_NAMES: Record<string, string> = {
  nodeName: 'API.NodeName',
  enable: 'Inference.Enable',
  serviceUrl: 'Inference.ServiceURL',
  webSocketUrl: 'Inference.WebSocketURL',
  apiKey: 'Inference.ApiKey',
  models: 'Inference.Models',
};
const AGENT_NAMES: Record<string, string> = { retentionBytes: 'RetentionMegabytes', capacityAuto: 'MaxConcurrentPerEndpoint' };

export function settingName(key: string): string {
  if (TOP_NAMES[key]) return TOP_NAMES[key];
  const [section, field = ''] = key.split('.');
  const cap = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);
  if (section === 'agent') return `Agent.${AGENT_NAMES[field] ?? cap(field.replace(/Ms$/, 'Seconds'))}`;
  if (section === 'gateway') return `Gateway.${cap(field)}`;
  return key;
}

/** The dotted keys whose values differ (the file, models.json's entries and the load notes are not settings). */
export function changedSettings(from: ProviderConfig, to: ProviderConfig): string[] {
  const out: string[] = [];
  const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);
  for (const key of ['nodeName', 'enable', 'serviceUrl', 'webSocketUrl', 'apiKey', 'models'] as const) if (!same(from[key], to[key])) out.push(key);
  for (const key of Object.keys(to.agent) as Array<keyof ProviderConfig['agent']>) if (!same(from.agent[key], to.agent[key])) out.push(`agent.${key}`);
  for (const key of Object.keys(to.gateway) as Array<keyof ProviderConfig['gateway']>)
    if (!same(from.gateway[key], to.gateway[key])) out.push(`gateway.${key}`);
  return out;
}

function applyLive(config: ProviderConfig, next: ProviderConfig, key: (typeof LIVE)[number]): void {
  if (key === 'nodeName') config.nodeName = next.nodeName;
  else if (key === 'models') config.models = next.models;
  else if (key === 'agent.ownerAddr') config.agent.ownerAddr = next.agent.ownerAddr;
  else config.agent.engineHosts = next.agent.engineHosts;
}

/**
 * Watches `config.file`. `onApplied` runs after live settings changed (the model set is rebuilt, the
 * console told). The running config object is changed in place, only in its LIVE settings.
 */
export function watchConfigToml(config: ProviderConfig, env: NodeJS.ProcessEnv, log: Logger, onApplied: (applied: string[]) => void): ConfigTomlWatch {
  const file = config.file;
  const dir = path.dirname(file);
  const base = path.basename(file);
  const reload = (): ConfigReload => {
    let next: ProviderConfig;
    try {
      next = loadConfig(file, env);
    } catch (e) {
      const error = e instanceof ConfigError ? e : new ConfigError('unreadable', file, undefined, (e as Error).message);
      log.error(`config.toml change refused: ${error.message.replace(/\.+$/, '')}. The settings in use are kept until the file is fixed.`, {
        code: 'config_refused',
        file: error.file,
        ...(error.line !== undefined ? { line: error.line } : {}),
        ...(error.setting ? { setting: error.setting } : {}),
      });
      return { result: 'refused', error };
    }
    const changed = changedSettings(config, next);
    if (changed.length === 0) return { result: 'unchanged' };
    const live = new Set<string>(LIVE);
    const applied = changed.filter((k) => live.has(k));
    const restart = changed.filter((k) => !live.has(k));
    for (const k of applied) applyLive(config, next, k as (typeof LIVE)[number]);
    const names = (keys: string[]): string[] => [...new Set(keys.map(settingName))];
    if (applied.length) log.info(`config.toml changed: ${names(applied).join(', ')} applied.`, { code: 'config_applied', settings: names(applied) });
    if (restart.length) {
      log.warn(
        `config.toml changed: ${names(restart).join(', ')} take effect after a restart; restart the agent to apply ${restart.length === 1 ? 'it' : 'them'}. The running agent keeps the values it started with.`,
        {
          code: 'config_restart_needed',
          settings: names(restart),
        },
      );
    }
    if (applied.length) onApplied(names(applied));
    return { result: 'changed', applied: names(applied), restartNeeded: names(restart) };
  };
  const watch = watchSettled(dir, base, 'config.toml', log, () => void reload());
  return { reload, close: watch.close };
}
