// How a host (CLI, Electron main, tests) creates the Agent. Implementation: src/core/agent.ts.
import type { AgentLog } from './base/log';
import type { SecretStore } from './config/secrets';

export interface AgentOptions {
  /** The agent's home folder: identity key, ledger, logs, settings. */
  home: string;
  /** computing-provider's config.toml (models.json beside it); default `<home>/config.toml`. It must exist:
   *  `swan-provider init` and the desktop's first run (src/main/first-run.ts) write one. */
  configPath?: string;
  log?: AgentLog;
  /** Defaults to a 0600 file in `home`; Electron passes a safeStorage-backed store. */
  secrets?: SecretStore;
  mode?: 'desktop' | 'headless';
  /** Environment for overrides (INFERENCE_WS_URL, INFERENCE_API_KEY) and tool lookup (PATH). */
  env?: NodeJS.ProcessEnv;
  /** Engine discovery probes of default ports (off in most tests). */
  discovery?: boolean;
  /** GPU sampling (off in most tests). */
  gpu?: boolean;
  /** Prometheus metrics (src/core/metrics), read by `/metrics` and the fleet API; off unless asked for. */
  metrics?: boolean;
}
