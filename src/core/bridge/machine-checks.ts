// The self-check's inputs to the verdict (verdict.ts machineChecks): the windows the engines run under the
// models.json overrides, the disk under the home (statfs, read at most once a minute: the snapshot is built
// up to ten times a second), and the hub requests since start with how long the link has been up. `doctor`
// reads the same (no link of its own: the traffic is asked of the agent running in the home, if any).
import fs from 'node:fs';
import type { ContextLengths } from '../engine-client/context-length';
import type { LinkStatus } from '../../shared/types';
import type { MachineChecks } from './verdict';

const DISK_EVERY_MS = 60_000;

export interface MachineCheckSources {
  home: string;
  announced: string[];
  contexts: Pick<ContextLengths, 'get' | 'engineWindow'>;
  /** The hub link and the hub requests since start (absent: no link here, traffic not read). */
  link?: Pick<LinkStatus, 'state' | 'since'>;
  hubRequests?: number;
}

export class MachineCheckReader {
  private disk?: { at: number; value?: MachineChecks['disk'] };

  read(s: MachineCheckSources, now = Date.now()): MachineChecks {
    const contexts = s.announced.flatMap((model) => {
      const announced = s.contexts.get(model);
      const engine = s.contexts.engineWindow(model);
      return announced.source === 'override' && engine ? [{ model, announced: announced.length, engine: engine.length, via: engine.via }] : [];
    });
    const disk = this.diskOf(s.home, now);
    return {
      ...(contexts.length ? { contexts } : {}),
      ...(disk ? { disk } : {}),
      ...(s.link?.state === 'connected' ? { traffic: { hubRequests: s.hubRequests ?? 0, connectedSince: s.link.since, now } } : {}),
    };
  }

  private diskOf(home: string, now: number): MachineChecks['disk'] {
    if (this.disk && now - this.disk.at < DISK_EVERY_MS) return this.disk.value;
    let value: MachineChecks['disk'];
    try {
      const st = fs.statfsSync(home);
      value = { path: home, freeBytes: st.bavail * st.bsize, totalBytes: st.blocks * st.bsize };
    } catch {
      value = undefined; // unknown: no finding rather than a guess
    }
    this.disk = { at: now, value };
    return value;
  }
}
