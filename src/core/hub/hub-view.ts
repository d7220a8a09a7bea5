// The hub's view of this node, from its register ack (v0.5, Go's recordHubView in
// hub_declaration_sync_test.go): `registered_models`, the announced models it accepted (one announced but
// not listed gets no traffic), and `upgrade_available {running, latest, message}`. An ack without them (a
// heartbeat ack, an older hub) leaves what was recorded; the owner sees both on the Dashboard and in doctor.
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import type { HubViewState } from '../../shared/types';
import { writeJsonAtomic } from '../config/atomic-file';
import { parseJson } from '../http/bounded-json';
import type { Logger } from '../base/log';
import type { AckPayload } from '../protocol/messages';
import { clampText } from './notices';

/** A hub lists the models it registered: more than any node announces would be a broken hub. */
const MAX_MODELS = 4096;
const MAX_ID = 256;

export interface HubViewEvents {
  change: [];
}

/** Announced models the hub did not register, and models it registered that were not announced (Go's diffModelLists). */
export function diffModelLists(announced: readonly string[], registered: readonly string[]): { missing: string[]; extra: string[] } {
  const reg = new Set(registered);
  const ann = new Set(announced);
  return { missing: announced.filter((m) => !reg.has(m)), extra: registered.filter((m) => !ann.has(m)) };
}

export class HubView extends EventEmitter<HubViewEvents> {
  private registered?: string[];
  private registeredAt?: number;
  private announcedThen: string[] = [];
  private upgrade?: HubViewState['upgrade'];
  private lastLogged = '';

  /** `file`: where the view is kept for `swan-provider doctor` (<home>/hub-view.json). */
  constructor(private readonly o: { log: Logger; now?: () => number; file?: string }) {
    super();
  }

  /** A register ack (link `registerAck`) and the models that register announced. */
  record(ack: AckPayload, announced: readonly string[]): void {
    const now = (this.o.now ?? Date.now)();
    let changed = false;
    if (Array.isArray(ack.registered_models)) {
      // The hub is a remote party: ids are clamped to what a model id can be before anyone sees them.
      this.registered = [
        ...new Set(
          ack.registered_models
            .slice(0, MAX_MODELS)
            .map((m) => clampText(m, MAX_ID, false))
            .filter((m) => m !== ''),
        ),
      ];
      this.registeredAt = now;
      this.announcedThen = [...announced];
      changed = true;
    }
    const up = ack.upgrade_available;
    if (up && (up.latest || up.message)) {
      const clean = (v: string | undefined, n: number): string | undefined => (v ? clampText(v, n, false) || undefined : undefined);
      const running = clean(up.running, 64);
      const latest = clean(up.latest, 64);
      const message = clean(up.message, 500);
      this.upgrade = { ...(running ? { running } : {}), ...(latest ? { latest } : {}), ...(message ? { message } : {}), at: now };
      changed = true;
    }
    if (!changed) return;
    this.logOnce();
    this.save();
    this.emit('change');
  }

  view(): HubViewState {
    const notRegistered = this.registered ? diffModelLists(this.announcedThen, this.registered).missing : [];
    return {
      ...(this.registered ? { registeredModels: [...this.registered], registeredAt: this.registeredAt } : {}),
      notRegistered,
      ...(this.upgrade ? { upgrade: { ...this.upgrade } } : {}),
    };
  }

  private save(): void {
    if (!this.o.file) return;
    try {
      writeJsonAtomic(this.o.file, this.view(), 2);
    } catch (e) {
      this.o.log.warn(`could not keep the hub's view in ${this.o.file}: ${(e as Error).message}`);
    }
  }

  /** One line per new verdict, not per re-register. */
  private logOnce(): void {
    const v = this.view();
    const key = JSON.stringify([v.notRegistered, v.upgrade?.latest, v.upgrade?.message]);
    if (key === this.lastLogged) return;
    this.lastLogged = key;
    if (v.notRegistered.length > 0) {
      this.o.log.warn(
        `the hub did not register ${v.notRegistered.length === 1 ? 'the model' : `${v.notRegistered.length} models`} ${v.notRegistered.join(', ')}: no requests will come for ${v.notRegistered.length === 1 ? 'it' : 'them'}. Check that each id is one the network's catalogue lists (swan-provider doctor) and the hub's notices.`,
        { code: 'MODEL_NOT_REGISTERED' },
      );
    } else if (this.registered) this.o.log.info(`the hub registered every announced model (${this.registered.length})`);
    const up = v.upgrade;
    if (up) {
      this.o.log.warn(
        `the hub advises an upgrade${up.latest ? `: provider release ${up.latest} is current` : ''}${up.running ? ` (this node speaks ${up.running})` : ''}${up.message ? `. The hub says: ${up.message}` : ''}. Update Swan Provider Console (Settings → About checks for a new version).`,
        { code: 'UPGRADE_AVAILABLE' },
      );
    }
  }
}

/** The view the agent kept (<home>/hub-view.json), or undefined when there is none or it is not one. */
export function readHubView(file: string): HubViewState | undefined {
  let raw: unknown;
  try {
    raw = parseJson(fs.readFileSync(file), { maxBytes: 4 * 1024 * 1024, maxDepth: 6, maxKeys: 20_000 });
  } catch {
    return undefined;
  }
  const v = raw as Partial<HubViewState> | null;
  if (!v || typeof v !== 'object' || !Array.isArray(v.notRegistered) || !v.notRegistered.every((m) => typeof m === 'string')) return undefined;
  const registered = Array.isArray(v.registeredModels) && v.registeredModels.every((m) => typeof m === 'string') ? v.registeredModels : undefined;
  const up = v.upgrade && typeof v.upgrade === 'object' ? v.upgrade : undefined;
  const s = (x: unknown): string | undefined => (typeof x === 'string' ? clampText(x, 500, false) : undefined);
  return {
    notRegistered: v.notRegistered.map((m) => clampText(m, MAX_ID, false)),
    ...(registered ? { registeredModels: registered.map((m) => clampText(m, MAX_ID, false)) } : {}),
    ...(typeof v.registeredAt === 'number' ? { registeredAt: v.registeredAt } : {}),
    ...(up && typeof up.at === 'number'
      ? {
          upgrade: {
            at: up.at,
            ...(s(up.running) ? { running: s(up.running) } : {}),
            ...(s(up.latest) ? { latest: s(up.latest) } : {}),
            ...(s(up.message) ? { message: s(up.message) } : {}),
          },
        }
      : {}),
  };
}

/**
 * doctor's lines on the hub's last word, as the running agent kept it: when it last said which models it
 * registered (the verdict says which it did not), and its upgrade advice (a note, not a problem).
 */
export function hubViewChecks(view: HubViewState | undefined): Array<{ ok: boolean; what: string }> {
  if (!view) return [];
  const when = (t: number | undefined): string => (t ? ` (${new Date(t).toISOString().replace('T', ' ').slice(0, 16)} UTC)` : '');
  const out: Array<{ ok: boolean; what: string }> = [];
  if (view.registeredModels) {
    out.push({
      ok: true,
      what: `the hub's last register ack${when(view.registeredAt)} registered ${view.registeredModels.length} model(s)${view.notRegistered.length ? `, not ${view.notRegistered.join(', ')}` : ''}`,
    });
  }
  const up = view.upgrade;
  if (up) {
    out.push({
      ok: true,
      what: `note: the hub advises an upgrade${up.latest ? `, provider release ${up.latest} is current` : ''}${up.running ? ` (this node speaks ${up.running})` : ''}${up.message ? `: ${up.message}` : ''}${when(up.at)}`,
    });
  }
  return out;
}
