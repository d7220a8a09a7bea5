// The ways a stream reaches the bench harness: read directly from the engine (the baseline), relayed
// by the agent, or relayed by the minimal forwarder (the practical limit); and, as a diagnostic, relayed
// by a second agent whose SQLite ledger is unavailable.
import { AGENT_NAME } from './agent-home';
import type { Rig } from './rig';
import { AGENT_B_NAME, FORWARDER_NAME, NO_LEDGER_NAME } from './rig';
import type { StreamTrace } from './trace';

export type PathName = 'direct' | 'agent' | 'forwarder' | 'agentNoLedger' | 'agentB';
export const PATHS: PathName[] = ['direct', 'agent', 'forwarder'];

const PROVIDER: Record<Exclude<PathName, 'direct'>, string> = {
  agent: AGENT_NAME,
  forwarder: FORWARDER_NAME,
  agentNoLedger: NO_LEDGER_NAME,
  agentB: AGENT_B_NAME,
};

export function streamVia(rig: Rig, path: PathName, chunks: number): Promise<StreamTrace> {
  if (path === 'direct') return rig.direct.stream(chunks);
  return rig.driver.stream(PROVIDER[path], chunks);
}

/** n concurrent streams of `chunks` tokens; fails if any stream failed. */
export async function concurrentStreams(rig: Rig, path: PathName, n: number, chunks: number): Promise<StreamTrace[]> {
  const traces = await Promise.all(Array.from({ length: n }, () => streamVia(rig, path, chunks)));
  const failed = traces.find((t) => t.error);
  if (failed) throw new Error(`${path}: a stream failed: ${failed.error}`);
  // chunks + the first (role) chunk + the usage chunk
  const short = traces.find((t) => t.chunks !== chunks + 2);
  if (short) throw new Error(`${path}: a stream delivered ${short.chunks} chunks instead of ${chunks + 2}`);
  return traces;
}
