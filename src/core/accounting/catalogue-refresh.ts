// The network's model catalogue, fetched now and every 30 minutes; a failure keeps the last good list.
import type { Catalogue } from '../platform/catalogue';

export const CATALOGUE_REFRESH_MS = 30 * 60_000;

export class CatalogueRefresh {
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly catalogue: Catalogue,
    private readonly refreshed: () => void,
  ) {}

  /** Fetches now and restarts the 30-minute timer (also when the ServiceURL changed). */
  run(): void {
    const once = (): void => void this.catalogue.refresh(true).then(this.refreshed);
    once();
    clearInterval(this.timer);
    this.timer = setInterval(once, CATALOGUE_REFRESH_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
