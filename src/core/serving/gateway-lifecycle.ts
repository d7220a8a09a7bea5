// The local gateway's lifecycle: started, restarted or stopped to match the settings ([Gateway] in
// config.toml overlaid by the console's), and what the snapshot says about it.
import type { AgentSnapshot } from '../../shared/views/snapshot';
import type { GatewayOptions } from '../gateway/options';
import { parseListen } from '../gateway/options';
import { startGateway, type Gateway } from '../gateway/server';
import type { GatewayKeys } from '../gateway/keys';
import type { Logger } from '../base/log';

export interface GatewayLifecycleDeps {
  /** Whether it should run and where, as the settings say now. */
  wanted: () => { enabled: boolean; listen: string };
  keys: GatewayKeys;
  log: Logger;
  /** Everything startGateway needs besides host, port, keys and log. */
  options: () => Omit<GatewayOptions, 'host' | 'port' | 'keys' | 'log'>;
  changed: () => void;
}

export class GatewayLifecycle {
  private gateway?: Gateway;
  private error?: string;

  constructor(private readonly d: GatewayLifecycleDeps) {}

  /** Stops the running gateway, then starts it again when enabled and `serving` (the agent is started). */
  async apply(serving: boolean): Promise<void> {
    const { enabled, listen } = this.d.wanted();
    await this.close();
    this.error = undefined;
    if (!enabled || !serving) {
      this.d.changed();
      return;
    }
    try {
      const { host, port } = parseListen(listen);
      this.gateway = await startGateway({ host, port, keys: this.d.keys, log: this.d.log, ...this.d.options() });
      this.d.log.info(`local gateway listening on ${this.gateway.url} (keys: ${this.d.keys.size}; create one with "swan-provider keys create")`);
    } catch (e) {
      this.error = `The local gateway could not start on ${listen}: ${(e as Error).message}. Pick another address in Settings.`;
      this.d.log.error(this.error);
    }
    this.d.changed();
  }

  async close(): Promise<void> {
    const g = this.gateway;
    this.gateway = undefined;
    await g?.close();
  }

  view(): AgentSnapshot['gateway'] {
    const { enabled, listen } = this.d.wanted();
    return {
      enabled,
      listen: this.gateway ? this.gateway.url.replace(/^http:\/\//, '') : listen,
      running: this.gateway !== undefined,
      keys: this.d.keys.size,
      ...(this.error ? { error: this.error } : {}),
    };
  }
}
