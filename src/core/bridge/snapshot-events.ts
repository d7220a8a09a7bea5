// State changes come from everywhere (a chunk, a health check, a setting), often many in one moment; the
// console needs the picture, not each change. Changes are coalesced into at most one snapshot event per
// 100 ms, and with nobody to tell (headless, no console open) the snapshot is not built at all (it reads
// the ledger's totals).
import type { AgentSnapshot } from '../../shared/views/snapshot';

export const SNAPSHOT_EVERY_MS = 100;

export class SnapshotEvents {
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly build: () => AgentSnapshot,
    private readonly send: (snapshot: AgentSnapshot) => void,
    private readonly listening: () => boolean,
  ) {}

  /** Something the console shows changed: a snapshot goes out within 100 ms, once for all changes till then. */
  changed(): void {
    if (this.timer || !this.listening()) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.send(this.build());
    }, SNAPSHOT_EVERY_MS);
  }

  /** Nothing more goes out (what is pending is dropped: the agent stopped). */
  close(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
