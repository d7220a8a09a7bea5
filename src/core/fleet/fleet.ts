// The agent's fleet part: the tokens other consoles present to read this rig (tokens.ts), the rigs this
// console reads (fleet-store.ts, fleet-reader.ts), and this rig's own figures as the fleet API serves
// them (rig-figures.ts, console/fleet-api.ts). The Agent constructs it; the console server serves `api`.
import type { FleetAccess, RigSummary, RigUsage } from '../../shared/fleet';
import type { SecretStore } from '../config/secrets';
import type { Logger } from '../base/log';
import { FleetReader } from './fleet-reader';
import { FleetStore } from './fleet-store';
import { FleetTokens } from './tokens';

/** What this rig's fleet API answers (console/fleet-api.ts serves it). */
export interface FleetApiSource {
  summary(access: FleetAccess): RigSummary;
  usage(): Promise<RigUsage>;
  /** The metrics text, when metrics are on. */
  metrics?: () => Promise<string>;
}

export interface FleetOptions {
  home: string;
  secrets: SecretStore;
  log: Logger;
  summary: (access: FleetAccess) => RigSummary;
  usage: () => Promise<RigUsage>;
  metrics?: () => Promise<string>;
  pollMs?: number;
}

export class Fleet {
  readonly tokens: FleetTokens;
  readonly store: FleetStore;
  readonly reader: FleetReader;
  /** What this rig's fleet API answers. */
  readonly api: FleetApiSource;

  constructor(o: FleetOptions) {
    this.tokens = new FleetTokens(o.home);
    this.store = new FleetStore(o.home, o.secrets);
    this.reader = new FleetReader({
      store: this.store,
      self: () => o.summary('full'),
      selfUsage: o.usage,
      log: o.log,
      ...(o.pollMs ? { pollMs: o.pollMs } : {}),
    });
    this.api = { summary: o.summary, usage: o.usage, ...(o.metrics ? { metrics: o.metrics } : {}) };
  }

  /** The tokens of the rigs this console reads, for the log's redaction. */
  rigTokens(): string[] {
    return this.store.list().flatMap((e) => this.store.token(e.id) ?? []);
  }
}
