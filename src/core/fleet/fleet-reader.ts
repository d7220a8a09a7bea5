// Reads the rigs the owner added, over their fleet APIs, every few seconds, and keeps what the Fleet page
// shows: each rig's last answer and how reading it goes. The reading is done here, by the agent, so the
// desktop app and the browser console show the same and the tokens never reach a page. A rig that stops
// answering stays in the list as unreachable, with since when and its last figures; it is dropped only
// when the owner removes it. This console's own rig is the first row, read in-process.
import { EventEmitter } from 'node:events';
import {
  addTotals,
  zeroTotals,
  type FleetErrorCode,
  type FleetRigView,
  type FleetTotals,
  type FleetUsageRig,
  type FleetUsageView,
  type FleetView,
  type RigStatus,
  type RigSummary,
  type RigUsage,
} from '../../shared/fleet';
import type { Logger } from '../base/log';
import { consoleLinkSchema, rigSummarySchema, rigUsageSchema } from './answer-schemas';
import type { FleetStore, RigEntry } from './fleet-store';
import { parseRigAddress, type RigAddress } from './rig-address';
import { callRig } from './rig-client';
import { FleetError } from './tokens';

/** How often each rig is read. With RIG_TIMEOUT_MS, a rig that goes away shows as unreachable within about 6 s. */
export const FLEET_POLL_MS = 3000;

interface RigState {
  status: RigStatus;
  since: number;
  lastSeenAt?: number;
  summary?: RigSummary;
  error?: string;
  errorCode?: FleetErrorCode;
  reading: boolean;
}

export interface FleetReaderOptions {
  store: FleetStore;
  /** This rig, read in-process. */
  self: () => RigSummary;
  selfUsage: () => Promise<RigUsage>;
  log: Logger;
  pollMs?: number;
  timeoutMs?: number;
  now?: () => number;
}

const TOKEN = /^[\x21-\x7e]{16,512}$/;

/** A pasted bookmark (`http://rig:7777/?token=…`) is an address and a token: split it. */
export function splitBookmark(raw: string): { address: string; token?: string } {
  const m = /^([^?#]*)\?(?:[^#]*&)?token=([^&#]+)/.exec(raw.trim());
  if (!m) return { address: raw.trim() };
  try {
    return { address: m[1]!, token: decodeURIComponent(m[2]!) };
  } catch {
    return { address: m[1]! };
  }
}

/** change: the view after each round of reads; lost: a rig that answered stopped answering (or refused the token). */
export class FleetReader extends EventEmitter<{ change: [FleetView]; lost: [FleetRigView] }> {
  private readonly states = new Map<string, RigState>();
  private readonly addresses = new Map<string, RigAddress>();
  private timer?: NodeJS.Timeout;
  private readonly now: () => number;
  private readonly started: number;

  constructor(private readonly o: FleetReaderOptions) {
    super();
    this.now = o.now ?? Date.now;
    this.started = this.now();
  }

  start(): void {
    if (this.timer) return;
    void this.poll();
    this.timer = setInterval(() => void this.poll(), this.o.pollMs ?? FLEET_POLL_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private address(e: RigEntry): RigAddress | undefined {
    let a = this.addresses.get(e.id);
    if (!a) {
      try {
        a = parseRigAddress(e.url);
        this.addresses.set(e.id, a);
      } catch {
        return undefined;
      }
    }
    return a;
  }

  private state(id: string): RigState {
    let s = this.states.get(id);
    if (!s) {
      s = { status: 'pending', since: this.now(), reading: false };
      this.states.set(id, s);
    }
    return s;
  }

  /** Reads every rig once (those still answering a previous read are left to it); emits the new view. */
  async poll(): Promise<void> {
    const entries = this.o.store.list();
    if (entries.length === 0) return;
    await Promise.all(entries.map((e) => this.read(e)));
    this.emit('change', this.view());
  }

  private async read(e: RigEntry): Promise<void> {
    const st = this.state(e.id);
    if (st.reading) return;
    const address = this.address(e);
    const token = this.o.store.token(e.id);
    if (!address || !token) {
      this.failed(
        st,
        new FleetError(
          address ? 'fleet_token_invalid' : 'fleet_address_invalid',
          address
            ? "This rig's token is missing from the secret store; remove the rig and add it again."
            : `The saved address ${e.url} is not valid; remove the rig and add it again.`,
        ),
      );
      return;
    }
    st.reading = true;
    try {
      const summary = await callRig({
        address,
        token,
        path: '/api/fleet/v1/summary',
        schema: rigSummarySchema,
        ...(this.o.timeoutMs ? { timeoutMs: this.o.timeoutMs } : {}),
      });
      if (st.status !== 'ok') {
        if (st.status !== 'pending') this.o.log.info(`fleet: ${e.label || summary.nodeName} (${address.base}) answers again`);
        st.since = this.now();
      }
      st.status = 'ok';
      st.summary = summary;
      st.lastSeenAt = this.now();
      delete st.error;
      delete st.errorCode;
    } catch (err) {
      this.failed(st, err, e, address);
    } finally {
      st.reading = false;
    }
  }

  private failed(st: RigState, err: unknown, e?: RigEntry, address?: RigAddress): void {
    const fe = err instanceof FleetError ? err : new FleetError('rig_bad_answer', (err as Error).message);
    const status: RigStatus = fe.code === 'rig_unreachable' ? 'unreachable' : fe.code === 'rig_refused_token' ? 'refused' : 'invalid';
    if (st.status !== status) {
      st.since = this.now();
      if (e) this.o.log.warn(`fleet: ${e.label || st.summary?.nodeName || e.url} (${address?.base ?? e.url}): ${fe.message}`);
    }
    const wasOk = st.status === 'ok';
    st.status = status;
    st.error = fe.message;
    st.errorCode = fe.code;
    const view = e && wasOk ? this.view().rigs.find((r) => r.id === e.id) : undefined;
    if (view) this.emit('lost', view);
  }

  private selfView(): FleetRigView {
    const summary = this.o.self();
    return {
      id: 'self',
      self: true,
      url: '',
      label: summary.nodeName,
      status: 'ok',
      since: this.started,
      lastSeenAt: summary.at,
      summary,
      insecure: false,
      addedAt: this.started,
    };
  }

  view(): FleetView {
    const rigs: FleetRigView[] = [this.selfView()];
    for (const e of this.o.store.list()) {
      const st = this.state(e.id);
      const address = this.address(e);
      rigs.push({
        id: e.id,
        self: false,
        url: address?.base ?? e.url,
        label: e.label || st.summary?.nodeName || e.url,
        status: st.status,
        since: st.since,
        ...(st.lastSeenAt !== undefined ? { lastSeenAt: st.lastSeenAt } : {}),
        ...(st.summary ? { summary: st.summary } : {}),
        ...(st.error ? { error: st.error } : {}),
        ...(st.errorCode ? { errorCode: st.errorCode } : {}),
        insecure: address?.insecure ?? false,
        addedAt: e.addedAt,
      });
    }
    return { rigs, totals: fleetTotals(rigs), updatedAt: this.now() };
  }

  /** Adds a rig after reading it once: a wrong address or token is said now, not later. */
  async add(input: { url: string; token?: string; label?: string }): Promise<FleetView> {
    const split = splitBookmark(input.url);
    const token = (input.token ?? '').trim() || split.token || '';
    const address = parseRigAddress(split.address);
    if (!TOKEN.test(token)) {
      throw new FleetError(
        'fleet_token_invalid',
        "Paste the rig's token: a fleet token made on that rig (swan-provider fleet token create), or its console token (the ?token=… of its bookmark).",
        'token',
      );
    }
    if (this.o.store.full) throw new FleetError('fleet_address_invalid', 'This console reads 64 rigs already; remove one first.', 'url');
    const existing = this.o.store.list();
    if (existing.some((e) => this.address(e)?.base === address.base)) throw new FleetError('rig_duplicate', `${address.base} is in the fleet already.`, 'url');
    const summary = await callRig({
      address,
      token,
      path: '/api/fleet/v1/summary',
      schema: rigSummarySchema,
      ...(this.o.timeoutMs ? { timeoutMs: this.o.timeoutMs } : {}),
    });
    if (summary.nodeId === this.o.self().nodeId)
      throw new FleetError('rig_is_self', `${address.base} is this rig's own console; it is on the Fleet page already.`, 'url');
    const twin = existing.find((e) => e.nodeId === summary.nodeId);
    if (twin) throw new FleetError('rig_duplicate', `That rig (${summary.nodeName}) is in the fleet already, at ${twin.url}.`, 'url');
    const entry = this.o.store.add({ url: address.base, label: (input.label ?? '').trim().slice(0, 64), nodeId: summary.nodeId }, token);
    this.addresses.set(entry.id, address);
    const now = this.now();
    this.states.set(entry.id, { status: 'ok', since: now, lastSeenAt: now, summary, reading: false });
    this.o.log.info(
      `fleet: added ${summary.nodeName} at ${address.base}${address.insecure ? ' (plain HTTP over the network: see docs/fleet.md for TLS or an SSH tunnel)' : ''}`,
    );
    const view = this.view();
    this.emit('change', view);
    return view;
  }

  remove(id: string): FleetView {
    const e = this.o.store.get(id);
    if (!e || !this.o.store.remove(id)) throw new FleetError('rig_not_found', 'No rig with that id is in the fleet (it was removed already?).', 'id');
    this.states.delete(id);
    this.addresses.delete(id);
    this.o.log.info(`fleet: removed ${e.label || e.url}`);
    const view = this.view();
    this.emit('change', view);
    return view;
  }

  /**
   * The address that opens a rig's own console: signed in (a one-time code from the rig) when this
   * console holds the rig's console token, else its plain address (the owner signs in there).
   */
  async consoleLink(id: string): Promise<{ url: string; signedIn: boolean }> {
    const e = this.o.store.get(id);
    const address = e && this.address(e);
    const token = e && this.o.store.token(e.id);
    if (!e || !address || !token) throw new FleetError('rig_not_found', 'No rig with that id is in the fleet.', 'id');
    if (this.state(id).summary?.access !== 'full') return { url: `${address.base}/`, signedIn: false };
    const link = await callRig({ address, token, path: '/api/fleet/v1/console-link', method: 'POST', schema: consoleLinkSchema });
    return { url: `${address.base}${link.path}`, signedIn: true };
  }

  /** Every rig's ledger, fetched now (each rig's own figures; nothing is copied into this rig's ledger). */
  usage(): Promise<FleetUsageView> {
    return readFleetUsage(this.o.store, this.o.selfUsage, {
      ...(this.o.timeoutMs ? { timeoutMs: this.o.timeoutMs } : {}),
      label: (e) => this.state(e.id).summary?.nodeName,
      now: this.now,
    });
  }
}

/**
 * Every rig's ledger: this rig's from `selfUsage`, the others fetched over their fleet APIs at once. A rig
 * that does not answer is listed with why, and left out of the sums. Used by the Usage page (through the
 * agent) and by `swan-provider usage --fleet` (the store read from the home folder).
 */
export async function readFleetUsage(
  store: Pick<FleetStore, 'list' | 'token'>,
  selfUsage: () => Promise<RigUsage>,
  o: { timeoutMs?: number; label?: (e: RigEntry) => string | undefined; missingToken?: string; now?: () => number } = {},
): Promise<FleetUsageView> {
  const self = await selfUsage();
  const rigs: FleetUsageRig[] = [{ id: 'self', self: true, label: self.nodeName, status: 'ok', usage: self }];
  const remote = await Promise.all(
    store.list().map(async (e): Promise<FleetUsageRig> => {
      const label = e.label || o.label?.(e) || e.url;
      const token = store.token(e.id);
      let address: RigAddress;
      try {
        address = parseRigAddress(e.url);
      } catch {
        return { id: e.id, self: false, label, status: 'invalid', error: `The saved address ${e.url} is not valid; remove the rig and add it again.` };
      }
      if (!token)
        return { id: e.id, self: false, label, status: 'invalid', error: o.missingToken ?? "The rig's token is missing; remove the rig and add it again." };
      try {
        const usage = await callRig({
          address,
          token,
          path: '/api/fleet/v1/usage',
          schema: rigUsageSchema,
          ...(o.timeoutMs ? { timeoutMs: o.timeoutMs } : {}),
        });
        return { id: e.id, self: false, label: e.label || usage.nodeName, status: 'ok', usage };
      } catch (err) {
        const fe = err instanceof FleetError ? err : new FleetError('rig_bad_answer', (err as Error).message);
        return {
          id: e.id,
          self: false,
          label,
          status: fe.code === 'rig_unreachable' ? 'unreachable' : fe.code === 'rig_refused_token' ? 'refused' : 'invalid',
          error: fe.message,
        };
      }
    }),
  );
  rigs.push(...remote);
  return fleetUsage(rigs, (o.now ?? Date.now)());
}

/** Sums across rigs: live figures of rigs that answer, and the last known ones of those that do not (counted in `stale`). */
export function fleetTotals(rigs: FleetRigView[]): FleetTotals {
  const models = new Set<string>();
  const t: FleetTotals = { rigs: rigs.length, reachable: 0, serving: 0, gpus: 0, models: 0, inFlight: 0, today: zeroTotals(), month: zeroTotals(), stale: 0 };
  for (const r of rigs) {
    if (r.status === 'ok') t.reachable++;
    const s = r.summary;
    if (!s) continue;
    if (r.status !== 'ok') t.stale++;
    else {
      // The rig's own verdict decides, never its link: a connected rig may be not routed, unpaid or failing.
      if (s.verdict?.state === 'serving') t.serving++;
      t.inFlight += s.models.reduce((n, m) => n + m.inFlight, 0);
    }
    t.gpus += s.gpus.length;
    for (const m of s.models) if (m.enabled) models.add(m.id);
    t.today = addTotals(t.today, s.today);
    t.month = addTotals(t.month, s.month);
  }
  t.models = models.size;
  return t;
}

export function fleetUsage(rigs: FleetUsageRig[], now: number): FleetUsageView {
  let today = zeroTotals();
  let last7 = zeroTotals();
  let last30 = zeroTotals();
  let month = zeroTotals();
  let platform: FleetUsageView['platform'] = null;
  const keys = new Set<string>();
  for (const r of rigs) {
    const u = r.usage;
    if (!u) continue;
    today = addTotals(today, u.today);
    last7 = addTotals(last7, u.last7);
    last30 = addTotals(last30, u.last30);
    month = addTotals(month, u.month);
    const p = u.platform.value;
    if (p) {
      platform ??= { providers: 0, rigs: 0, totalInferences: 0, totalTokens: 0, totalEarningsUsd: 0 };
      platform.rigs++;
      // Rigs that serve with one provider key share the platform's one record of it: counted once.
      if (u.providerKeyId !== null && keys.has(u.providerKeyId)) continue;
      if (u.providerKeyId !== null) keys.add(u.providerKeyId);
      platform.providers++;
      platform.totalInferences += p.totalInferences;
      platform.totalTokens += p.totalTokens;
      platform.totalEarningsUsd += p.totalEarningsUsd;
    }
  }
  return { rigs, totals: { today, last7, last30, month }, platform, generatedAt: now };
}
