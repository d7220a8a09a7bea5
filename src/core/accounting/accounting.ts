// The accounting feature: what was served and what it earns. It opens the ledger (usage and earnings in
// SQLite), commits the rows of finished requests once per turn before their finals leave (LedgerBatch),
// writes the request log lines, keeps the network's rates and the platform's own record beside it
// (EarningsService: energy per request, Ollama pulls, "serve this"), and the model catalogue.
import type { Lifecycle } from '../base/lifecycle';
import type { OwnerValues } from '../config/owner-values';
import { homePath } from '../config/home-layout';
import { Ledger } from '../ledger/ledger';
import type { AgentLog, Logger } from '../base/log';
import { Catalogue } from '../platform/catalogue';
import { CatalogueRefresh } from './catalogue-refresh';
import { EarningsService } from './earnings';
import { refreshEarningsFlag } from './earnings-flag';
import { LedgerBatch } from './ledger-batch';
import { modelsJsonOf } from '../models/network-map';
import { RequestLines } from './request-log';
import type { Engines } from '../engines/engines';
import { wireAccounting } from './wiring';

/** Space kept on the ledger's disk for a full disk: about 10,000 rows (the most held in memory) with their WAL pages. */
const LEDGER_RESERVE_BYTES = 16 * 1024 * 1024;

export interface AccountingDeps {
  home: string;
  owner: OwnerValues;
  engines: Engines;
  log: AgentLog;
  life: Lifecycle;
  /** Something the console shows changed. */
  changed: () => void;
}

export class Accounting {
  /** Absent when the file cannot be opened: serving goes on, and the console says the history is unavailable. */
  readonly ledger?: Ledger;
  readonly batch: LedgerBatch;
  readonly earnings: EarningsService;
  readonly catalogue: Catalogue;
  readonly catalogueRefresh: CatalogueRefresh;
  /** Request log lines, written right after the turn their requests ended in. */
  private readonly requestLines: RequestLines;
  private readonly l: Logger;

  constructor(private readonly d: AccountingDeps) {
    const { owner, engines, log } = d;
    this.l = log.child('agent');
    try {
      // Checkpoints on their own thread: their fsyncs never hold the streams this thread relays.
      this.ledger = Ledger.open(homePath(d.home, 'ledger'), {
        log: log.child('ledger'),
        checkpointOffThread: true,
        reserve: { file: homePath(d.home, 'ledgerReserve'), bytes: LEDGER_RESERVE_BYTES },
      });
    } catch (e) {
      this.l.error(`usage history is unavailable: ${(e as Error).message}. Serving continues; records are kept in memory.`);
    }
    this.batch = new LedgerBatch(this.ledger);
    this.requestLines = new RequestLines(log.child('requests'));
    this.earnings = new EarningsService({
      home: d.home,
      ...(this.ledger ? { ledger: this.ledger } : {}),
      log: log.child('earnings'),
      serviceUrl: () => owner.serviceUrl(),
      providerKey: () => owner.providerKey(),
      models: () => engines.registry.announced(),
      machine: () => ({
        known: engines.registry.all().map((m) => m.id),
        ollamaEngines: engines.models
          .engineList()
          .filter((e) => e.type === 'ollama' && e.reachable)
          .map((e) => e.url),
        vramGb: engines.gpu.gpus.length > 0 ? engines.gpu.gpus.reduce((t, g) => t + g.vramTotalMb, 0) / 1024 : null,
      }),
      onPulled: () => void engines.models.rescan(),
      openPull: (target, path, body, signal) => engines.runner.open({ purpose: 'ollama-pull', target, path, body, signal, timeoutMs: 120_000 }),
      modelsFile: modelsJsonOf(owner.config),
      // "Serve this": models.json now maps the network id to the engine's own name; switch it on, tell the hub.
      onMapped: (id) => {
        owner.settings.update((s) => ({ ...s, models: { ...s.models, [id]: { ...s.models?.[id], enabled: true } } }));
        engines.reloadModelsJson();
      },
    });
    this.catalogue = new Catalogue({ serviceUrl: () => owner.serviceUrl(), log: log.child('catalogue') });
    this.catalogueRefresh = new CatalogueRefresh(this.catalogue, d.changed);
    wireAccounting(
      { book: engines.book, sampler: engines.sampler, earnings: this.earnings, batch: this.batch, requestLines: this.requestLines, ledger: this.ledger },
      d.changed,
    );
    this.register(d.life);
  }

  /** Reads earnings_enabled from the hub's provider status into the ledger (earnings-flag.ts). */
  refreshEarningsFlag(): Promise<void> {
    return refreshEarningsFlag({
      key: this.d.owner.providerKey(),
      serviceUrl: this.d.owner.serviceUrl(),
      ...(this.ledger ? { ledger: this.ledger } : {}),
      log: this.l,
    });
  }

  private register(life: Lifecycle): void {
    // Registered first, so stopped last: the lines of the last requests, then the ledger once nothing writes.
    life.onStop('request log', () => this.requestLines.flush());
    life.onStop('ledger', async () => {
      this.batch.flush();
      this.ledger?.close();
      await this.ledger?.threadEnded();
    });
    life.add({
      name: 'earnings',
      start: () => this.earnings.start(),
      stop: () => {
        this.earnings.stop();
        this.batch.flush();
      },
    });
    life.add({ name: 'catalogue', start: () => this.catalogueRefresh.run(), stop: () => this.catalogueRefresh.stop() });
  }
}
