// Pre-connect check of a provider key: GET {ServiceURL}/api/v1/provider/status with the key as a
// Bearer token. The hub answers {provider_id, name, status, can_connect, api_key_valid, message,
// warning?, next_steps[], step, total_steps, step_label, earnings_enabled} (the Go provider's
// ProviderStatusResponse). Used by onboarding ("check key"), `doctor`, earnings_enabled, and the
// ProviderGate, which decides whether the agent connects at all (as the Go InferenceClient.Start does).
import { EventEmitter } from 'node:events';
import { z } from 'zod';
import type { ProviderStatusView } from '../../shared/views/snapshot';
import type { KeyStatusDetailView } from '../../shared/views/settings';
import type { Logger } from '../base/log';
import { JSON_LIMITS, parseJson } from '../http/bounded-json';
import { readCapped } from '../http/read-body';

/** The largest provider-status answer read (the real one is under 2 KB). */
const MAX_STATUS_BYTES = 256 * 1024;

const statusSchema = z
  .object({
    provider_id: z.string().optional(),
    name: z.string().optional(),
    status: z.string().optional(),
    can_connect: z.boolean().optional(),
    api_key_valid: z.boolean().optional(),
    message: z.string().optional(),
    warning: z.string().optional(),
    next_steps: z.array(z.string()).nullish(),
    step: z.number().int().nonnegative().optional(),
    total_steps: z.number().int().nonnegative().optional(),
    step_label: z.string().optional(),
    earnings_enabled: z.boolean().optional(),
  })
  .passthrough();
export type ProviderStatus = z.infer<typeof statusSchema>;

export async function fetchProviderStatus(serviceUrl: string, key: string, timeoutMs = 10_000): Promise<{ status?: ProviderStatus; httpStatus?: number; error?: string }> {
  const url = `${serviceUrl.replace(/\/+$/, '')}/api/v1/provider/status`;
  try {
    // The key goes to this host only: never follow a redirect elsewhere with it. The answer is read up to
    // its limit, never whole first.
    const res = await fetch(url, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(timeoutMs), redirect: 'error' });
    let text: string;
    try {
      text = await readCapped(res, MAX_STATUS_BYTES);
    } catch (e) {
      return { httpStatus: res.status, error: `${url} answered HTTP ${res.status} with a body that could not be read (${(e as Error).message})` };
    }
    let json: unknown;
    try {
      json = parseJson(text, JSON_LIMITS.platform);
    } catch (e) {
      return { httpStatus: res.status, error: `${url} answered HTTP ${res.status} with something that is not JSON we read (${(e as Error).message})` };
    }
    const parsed = statusSchema.safeParse(json);
    if (!parsed.success) return { httpStatus: res.status, error: `${url} answered with an unexpected shape` };
    return { status: parsed.data, httpStatus: res.status };
  } catch (e) {
    const reason = (e as Error).name === 'TimeoutError' ? `no answer within ${timeoutMs / 1000} s` : ((e as { cause?: Error }).cause?.message ?? (e as Error).message);
    return { error: `could not reach ${url} (${reason})` };
  }
}

/** The parts of a provider status the owner is shown (onboarding, doctor); only well-typed fields are kept. */
export type KeyStatusDetail = KeyStatusDetailView;

const str = (v: unknown, max = 500) => (typeof v === 'string' && v.trim() ? v.trim().slice(0, max) : undefined);
const int = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 100 ? v : undefined);

export function keyStatusDetail(st: ProviderStatus): KeyStatusDetail {
  const steps = Array.isArray(st.next_steps) ? (st.next_steps as unknown[]).map((x) => str(x)).filter((x): x is string => x !== undefined).slice(0, 10) : [];
  const d: KeyStatusDetail = { nextSteps: steps };
  const status = str(st.status, 64);
  if (status) d.status = status;
  if (typeof st.can_connect === 'boolean') d.canConnect = st.can_connect;
  const step = int(st.step);
  const total = int(st.total_steps);
  if (step !== undefined) d.step = step;
  if (total !== undefined) d.totalSteps = total;
  const label = str(st.step_label, 200);
  if (label) d.stepLabel = label;
  const warning = str(st.warning);
  if (warning) d.warning = warning;
  return d;
}

export async function checkProviderKey(serviceUrl: string, key: string): Promise<{ valid: boolean; message: string; detail?: KeyStatusDetail }> {
  const r = await fetchProviderStatus(serviceUrl, key.trim());
  if (r.error) return { valid: false, message: `The key could not be checked: ${r.error}. Check the network (hub addresses) in Settings and your connection.` };
  const detail = r.status ? { detail: keyStatusDetail(r.status) } : {};
  if (r.httpStatus === 401 || r.httpStatus === 403 || r.status?.api_key_valid === false) {
    return { valid: false, message: r.status?.message ?? 'The hub does not accept this key. Copy it again from your Swan Inference provider page.', ...detail };
  }
  const name = r.status?.name ? ` for "${r.status.name}"` : '';
  return { valid: true, message: r.status?.message ?? `Key accepted${name}.`, ...detail };
}

// ---- the gate ----
const clip = (t: string | undefined, n: number): string | undefined => (t === undefined ? undefined : t.replace(/[\u0000-\u001f\u007f]/g, ' ').slice(0, n));

/** The console's view of one status answer (texts from the platform clipped; it is an outside party). */
export function statusView(url: string, r: { status?: ProviderStatus; httpStatus?: number; error?: string }, now = Date.now()): ProviderStatusView {
  const st = r.status;
  const base: ProviderStatusView = { state: 'unreachable', url, checkedAt: now, nextSteps: [] };
  if (!st) return { ...base, error: r.error ?? `HTTP ${r.httpStatus ?? '?'}` };
  const view: ProviderStatusView = {
    ...base,
    ...(st.provider_id ? { providerId: clip(st.provider_id, 128)! } : {}),
    ...(st.name ? { name: clip(st.name, 128)! } : {}),
    ...(st.status ? { status: clip(st.status, 64)! } : {}),
    ...(st.can_connect !== undefined ? { canConnect: st.can_connect } : {}),
    ...(st.api_key_valid !== undefined ? { apiKeyValid: st.api_key_valid } : {}),
    ...(st.message ? { message: clip(st.message, 1000)! } : {}),
    ...(st.warning ? { warning: clip(st.warning, 1000)! } : {}),
    nextSteps: (st.next_steps ?? []).slice(0, 20).map((x) => clip(x, 500)!),
    ...(st.step !== undefined ? { step: st.step } : {}),
    ...(st.total_steps !== undefined ? { totalSteps: st.total_steps } : {}),
    ...(st.step_label ? { stepLabel: clip(st.step_label, 200)! } : {}),
    ...(st.earnings_enabled !== undefined ? { earningsEnabled: st.earnings_enabled } : {}),
  };
  // Only an explicit false stops us: a field the platform left out is not a refusal.
  if (st.api_key_valid === false || (r.httpStatus === 401 && st.api_key_valid !== true)) return { ...view, state: 'invalid_key' };
  if (st.can_connect === false) return { ...view, state: 'waiting' };
  return { ...view, state: 'ok' };
}

/** The lines `doctor` prints (and the log repeats) for a status. */
export function describeStatus(v: ProviderStatusView): string[] {
  const lines: string[] = [];
  if (v.status) lines.push(`status: ${v.status}${v.totalSteps ? ` (step ${v.step ?? 0} of ${v.totalSteps}${v.stepLabel ? `: ${v.stepLabel}` : ''})` : ''}`);
  if (v.message) lines.push(v.message);
  if (v.warning) lines.push(`warning: ${v.warning}`);
  for (const s of v.nextSteps) lines.push(`next: ${s}`);
  if (v.earningsEnabled !== undefined) lines.push(`earnings: ${v.earningsEnabled ? 'enabled' : 'not enabled yet'}`);
  return lines;
}

export interface ProviderGateOptions {
  serviceUrl: () => string;
  key: () => string;
  log: Logger;
  /** Called when the status allows connecting (or could not be read: then we try, as the Go provider does). */
  connect: () => void;
  /** Re-check while can_connect is false (default 60 s). */
  waitRecheckMs?: number;
  /** Re-check after api_key_valid false (default 5 min; a key change checks at once). */
  invalidRecheckMs?: number;
  timeoutMs?: number;
}

export interface ProviderGateEvents {
  change: [ProviderStatusView];
}

/**
 * Reads the provider status before the link starts: api_key_valid false → no connection, and says why;
 * can_connect false → wait, re-checking every minute, and says so; otherwise (or when the platform
 * cannot be asked) → connect.
 */
export class ProviderGate extends EventEmitter<ProviderGateEvents> {
  private current: ProviderStatusView;
  private timer?: NodeJS.Timeout;
  private running?: Promise<ProviderStatusView>;
  private stopped = false;

  constructor(private readonly o: ProviderGateOptions) {
    super();
    this.current = { state: o.key() ? 'checking' : 'no_key', url: this.statusUrl(), nextSteps: [] };
  }

  view(): ProviderStatusView {
    return this.current;
  }

  private statusUrl(): string {
    return `${this.o.serviceUrl().replace(/\/+$/, '')}/api/v1/provider/status`;
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /** (Re)starts the gate after stop() and checks at once. */
  start(): Promise<ProviderStatusView> {
    this.stopped = false;
    return this.check();
  }

  /** Checks now (coalescing concurrent calls) and connects when allowed. Does nothing once stopped. */
  check(): Promise<ProviderStatusView> {
    if (this.stopped) return Promise.resolve(this.current);
    this.running ??= this.run().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private set(v: ProviderStatusView): void {
    this.current = v;
    this.emit('change', v);
  }

  private async run(): Promise<ProviderStatusView> {
    clearTimeout(this.timer);
    const key = this.o.key();
    const url = this.statusUrl();
    if (!key) {
      this.set({ state: 'no_key', url, nextSteps: [] });
      return this.current;
    }
    if (this.current.state !== 'ok') this.set({ ...this.current, state: 'checking', url });
    const r = await fetchProviderStatus(this.o.serviceUrl(), key, this.o.timeoutMs ?? 10_000);
    if (this.stopped) return this.current;
    const v = statusView(url, r);
    const log = this.o.log;
    const detail = describeStatus(v).join(' | ');
    if (v.state === 'invalid_key') {
      const next = Date.now() + (this.o.invalidRecheckMs ?? 300_000);
      this.set({ ...v, nextCheckAt: next });
      log.error(`not connecting: the platform says the provider key is not valid (${v.message ?? `HTTP ${r.httpStatus}`}). Copy the key again from your Swan Inference provider page into Settings.${detail ? ` ${detail}` : ''}`, { code: 'provider_key_invalid' });
      this.schedule(this.o.invalidRecheckMs ?? 300_000);
    } else if (v.state === 'waiting') {
      const ms = this.o.waitRecheckMs ?? 60_000;
      this.set({ ...v, nextCheckAt: Date.now() + ms });
      log.warn(`not connecting yet: the platform says this provider cannot connect (status ${v.status ?? 'unknown'}). Checking again in ${Math.round(ms / 1000)} s.${detail ? ` ${detail}` : ''}`, { code: 'provider_cannot_connect' });
      this.schedule(ms);
    } else {
      this.set(v);
      if (v.state === 'unreachable') log.warn(`could not read the provider status (${v.error ?? 'no answer'}); connecting anyway`, { code: 'provider_status_unreachable' });
      else if (v.status && v.status !== 'active') log.warn(`provider status: ${v.status}${v.earningsEnabled === false ? ' (earnings are not enabled yet)' : ''}.${detail ? ` ${detail}` : ''}`);
      else log.info(`provider status: ${v.status ?? 'ok'}${v.earningsEnabled !== undefined ? `, earnings ${v.earningsEnabled ? 'enabled' : 'not enabled'}` : ''}`);
      this.o.connect();
    }
    return this.current;
  }

  private schedule(ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.check(), ms);
    this.timer.unref();
  }
}
