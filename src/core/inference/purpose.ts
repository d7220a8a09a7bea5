// Why the agent calls an engine, and what follows from it: one row per purpose. Every engine call goes
// through the one service (runner.ts) with its purpose, and this table is the only place the differences
// live: who pays for it, which queue it waits in, whether the console and ledger see it, whether the
// heartbeat counts it, whether it may move to another endpoint or be tried again.
import type { RequestPurpose, RequestSource } from '../../shared/types';

/**
 * hub: a hub `inference`, paid traffic. gateway: the local gateway, the owner's own apps. try: the console's
 * test prompt (models.try). warmup: a warmup greeting (the hub's `warmup`, or the console's Warm up).
 * ollama-load: Ollama's load call (/api/generate with keep_alive), the first step of an Ollama warmup.
 * verify / benchmark: a hub challenge's generations. health: the deep health check, a one-token chat to one
 * model on one endpoint (also the engine-key proof). ollama-pull: "Serve this" with Ollama, a download.
 * ollama-unload: a pause that frees the GPU unloads Ollama's models (/api/generate with keep_alive 0).
 */
export type Purpose = RequestPurpose;

export interface PurposePolicy {
  /** A client's request (the hub's, the owner's apps', the console's test prompt), not one of the agent's own. */
  client: boolean;
  /** Source in the request book and ledger: only 'hub' earns (every earnings figure keys on it). */
  source: RequestSource;
  /** Scheduler lane it waits in; 'caller' = the lane of whoever asked (the hub's for hub messages). */
  lane: RequestSource | 'caller';
  /**
   * How it is admitted: 'model' = a scheduler lease for the model (limits, queue, pause, health, the turn
   * pacer); 'endpoint' = a slot on the one endpoint it must reach, at once or not at all, whatever the
   * endpoint's health or a pause (it is what finds out whether the engine serves); 'none' = no slot.
   */
  admission: 'model' | 'endpoint' | 'none';
  /** Booked in the request book (console Requests) and, through it, the ledger. */
  booked: boolean;
  /** Counted in the heartbeat's request metrics (total_requests, requests_per_minute, …). */
  heartbeat: boolean;
  /** Token counts estimated (and marked so) when the engine reports none; else only what it reported. */
  estimates: boolean;
  /** May move to another endpoint of the model when its engine is gone before any byte was sent. */
  failover: boolean;
  /** One retry of a transient engine failure (502, refused, reset) before any byte was sent. */
  retry: boolean;
  /** Engine trouble it meets (refused, reset, key refused) reaches the health monitor. */
  reportsTrouble: boolean;
  /** A readable label at the front of a booked request's id, for the ledger and CSV; no code reads it. */
  label: string;
}

const CLIENT = { client: true, admission: 'model', booked: true, estimates: true, failover: true, retry: true, reportsTrouble: true } as const;
const OWN = {
  client: false,
  source: 'local',
  admission: 'model',
  booked: true,
  heartbeat: false,
  estimates: false,
  failover: true,
  retry: false,
  reportsTrouble: true,
} as const;

export const POLICY: Readonly<Record<Purpose, PurposePolicy>> = {
  hub: { ...CLIENT, source: 'hub', lane: 'hub', heartbeat: true, label: '' },
  gateway: { ...CLIENT, source: 'local', lane: 'local', heartbeat: false, label: '' },
  try: { ...CLIENT, source: 'local', lane: 'local', heartbeat: false, label: 'try' },
  warmup: { ...OWN, lane: 'caller', label: 'warmup' },
  'ollama-load': { ...OWN, lane: 'caller', label: 'warmup' },
  verify: { ...OWN, lane: 'hub', label: 'verify' },
  benchmark: { ...OWN, lane: 'hub', label: 'benchmark' },
  health: {
    client: false,
    source: 'local',
    lane: 'local',
    admission: 'endpoint',
    booked: false,
    heartbeat: false,
    estimates: false,
    failover: false,
    retry: false,
    reportsTrouble: false,
    label: 'health',
  },
  'ollama-pull': {
    client: false,
    source: 'local',
    lane: 'local',
    admission: 'none',
    booked: false,
    heartbeat: false,
    estimates: false,
    failover: false,
    retry: false,
    reportsTrouble: false,
    label: 'pull',
  },
  'ollama-unload': {
    client: false,
    source: 'local',
    lane: 'local',
    admission: 'none',
    booked: false,
    heartbeat: false,
    estimates: false,
    failover: false,
    retry: false,
    reportsTrouble: false,
    label: 'unload',
  },
};

export const PURPOSES = Object.keys(POLICY) as Purpose[];
