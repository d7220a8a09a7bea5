// Diagnostic for a missed latency target: the same agent with its SQLite ledger unavailable. The ledger
// commits each finished request with an fsync on the agent's thread; to see what that costs the
// streams still running, ledger.sqlite is made a directory so the ledger cannot open and the agent
// keeps usage in memory (its own fallback), and the 64-stream levels run again, baseline included.
import fs from 'node:fs';
import path from 'node:path';
import type { StepPhase } from './bench-engine';
import type { Rig } from './rig';
import { relayLevel, type RelayLevel } from './scenario-latency';
import type { BenchSettings } from './settings';

export async function relayWithoutLedger(rig: Rig, s: BenchSettings, phases: StepPhase[]): Promise<RelayLevel[]> {
  const db = path.join(rig.home, 'ledger.sqlite');
  await rig.agent.stop();
  for (const f of [db, `${db}-wal`, `${db}-shm`]) fs.rmSync(f, { recursive: true, force: true });
  fs.mkdirSync(db);
  try {
    await rig.restartAgent();
    const out: RelayLevel[] = [];
    for (const phase of phases) out.push(await relayLevel(rig, s, 64, phase));
    return out;
  } finally {
    await rig.agent.stop();
    fs.rmSync(db, { recursive: true, force: true });
    await rig.restartAgent();
  }
}
