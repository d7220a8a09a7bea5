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
import { cleanNextSteps } from '../platform/next-steps';
import { networkFailure, type NetworkFailureCode } from '../http/network-failure';

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

/**
 * Whether an answer is the platform's provider status, not merely JSON: it carries `api_key_valid` or
 * `can_connect` as booleans. A server that is not a Swan hub (llama.cpp's `{"error": {"code": 404…}}` at
 * the ServiceURL, a proxy's error page) answers JSON too, and such an answer must never read as a key accepted.
 */
export function isStatusShape(json: unknown): boolean {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return false;
  const o = json as Record<string, unknown>;
  return typeof o.api_key_valid === 'boolean' || typeof o.can_connect === 'boolean';
}

/** Why a status could not be had: the address is not a Swan hub, or it could not be asked at all. */
export type StatusFailure = 'not_a_hub' | 'unreachable';

export async function fetchProviderStatus(
  serviceUrl: string,
  key: string,
  timeoutMs = 10_000,
): Promise<{ status?: ProviderStatus; httpStatus?: number; error?: string; failure?: StatusFailure; network?: NetworkFailureCode }> {
  const url = `${serviceUrl.replace(/\/+$/, '')}/api/v1/provider/status`;
  // `why`: what the bounded reader said of an answer it would not read (too deep, not JSON), kept in the words.
  const notHub = (status: number, why?: string): string =>
    `${url} does not answer like a Swan hub (HTTP ${status}${why ? `; ${why.slice(0, 200)}` : ''}): check the network's API address (ServiceURL)`;
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
      return { httpStatus: res.status, failure: 'not_a_hub', error: notHub(res.status, (e as Error).message) };
    }
    const parsed = statusSchema.safeParse(json);
    // A refusal of the key may come in another shape; any other answer must be the platform's status.
    const refusal = res.status === 401 || res.status === 403;
    if (!parsed.success || (!refusal && (!res.ok || !isStatusShape(json)))) return { httpStatus: res.status, failure: 'not_a_hub', error: notHub(res.status) };
    return { status: parsed.data, httpStatus: res.status };
  } catch (e) {
    // Plain words, never Node's raw "getaddrinfo ENOTFOUND …" (http/network-failure.ts).
    const f = networkFailure(e, hostOf(url), timeoutMs);
    return { failure: 'unreachable', error: f.words, network: f.code };
  }
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/** The parts of a provider status the owner is shown (onboarding, doctor); only well-typed fields are kept. */
export type KeyStatusDetail = KeyStatusDetailView;

const str = (v: unknown, max = 500) => (typeof v === 'string' && v.trim() ? v.trim().slice(0, max) : undefined);
const int = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 100 ? v : undefined);

export function keyStatusDetail(st: ProviderStatus): KeyStatusDetail {
  // Written for the Go provider's CLI and numbered by the platform: cleaned (platform/next-steps.ts).
  const steps = Array.isArray(st.next_steps)
    ? cleanNextSteps(
        (st.next_steps as unknown[])
          .map((x) => str(x))
          .filter((x): x is string => x !== undefined)
          .slice(0, 10),
      )
    : [];
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

/** What a key check found, stable for tests and tools: accepted, refused, not a Swan hub, or not checked (no answer). */
export type KeyCheckCode = 'key_accepted' | 'key_refused' | 'not_a_hub' | 'key_unchecked';

export async function checkProviderKey(
  serviceUrl: string,
  key: string,
): Promise<{ valid: boolean; code: KeyCheckCode; message: string; detail?: KeyStatusDetail; unreachable?: boolean }> {
  const r = await fetchProviderStatus(serviceUrl, key.trim());
  if (r.failure === 'not_a_hub') {
    return {
      valid: false,
      code: 'not_a_hub',
      message: `This address does not answer like a Swan hub (HTTP ${r.httpStatus ?? '?'}), so the key was not checked. Check the network's addresses in Settings: the API address (ServiceURL) must be the hub's, not an engine's.`,
    };
  }
  // The platform could not be asked: the key is neither good nor bad yet. It may be saved as it is and is
  // checked once the network is back (the ProviderGate re-checks while the platform is unreachable).
  if (r.network)
    return {
      valid: false,
      code: 'key_unchecked',
      unreachable: true,
      message: `The key could not be checked: ${r.error}. You can save it now; it is checked once the network is back.`,
    };
  if (r.error)
    return {
      valid: false,
      code: 'key_unchecked',
      message: `The key could not be checked: ${r.error}. Check the network (hub addresses) in Settings and your connection.`,
    };
  const detail = r.status ? { detail: keyStatusDetail(r.status) } : {};
  if (r.httpStatus === 401 || r.httpStatus === 403 || r.status?.api_key_valid === false) {
    return {
      valid: false,
      code: 'key_refused',
      message: r.status?.message ?? 'The hub does not accept this key. Copy it again from your Swan Inference provider page.',
      ...detail,
    };
  }
  const name = r.status?.name ? ` for "${r.status.name}"` : '';
  return { valid: true, code: 'key_accepted', message: r.status?.message ?? `Key accepted${name}.`, ...detail };
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
    nextSteps: cleanNextSteps((st.next_steps ?? []).slice(0, 20).map((x) => clip(x, 500)!)),
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
  /** While the platform cannot be reached: the first re-check (default 5 s), doubling to 60 s. */
  unreachableRecheckMs?: number;
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
  /** Re-checks in a row that found the platform unreachable (the backoff's exponent). */
  private unreachableChecks = 0;

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
    if (v.state !== 'unreachable') this.unreachableChecks = 0;
    if (v.state === 'invalid_key') {
      const next = Date.now() + (this.o.invalidRecheckMs ?? 300_000);
      this.set({ ...v, nextCheckAt: next });
      log.error(
        `not connecting: the platform says the provider key is not valid (${v.message ?? `HTTP ${r.httpStatus}`}). Copy the key again from your Swan Inference provider page into Settings.${detail ? ` ${detail}` : ''}`,
        { code: 'provider_key_invalid' },
      );
      this.schedule(this.o.invalidRecheckMs ?? 300_000);
    } else if (v.state === 'waiting') {
      const ms = this.o.waitRecheckMs ?? 60_000;
      this.set({ ...v, nextCheckAt: Date.now() + ms });
      log.warn(
        `not connecting yet: the platform says this provider cannot connect (status ${v.status ?? 'unknown'}). Checking again in ${Math.round(ms / 1000)} s.${detail ? ` ${detail}` : ''}`,
        { code: 'provider_cannot_connect' },
      );
      this.schedule(ms);
    } else if (v.state === 'unreachable') {
      // Connect anyway (as the Go provider does), and ask again until the platform answers: a key saved while
      // the network was down is checked once it is back.
      const ms = Math.min((this.o.unreachableRecheckMs ?? 5000) * 2 ** this.unreachableChecks++, 60_000);
      this.set({ ...v, nextCheckAt: Date.now() + ms });
      // Said once per outage; the re-checks that follow go to the debug log.
      const line = `could not read the provider status (${v.error ?? 'no answer'}); connecting anyway, checking again in ${Math.round(ms / 1000)} s`;
      if (this.unreachableChecks === 1) log.warn(line, { code: 'provider_status_unreachable' });
      else log.debug(line, { code: 'provider_status_unreachable' });
      this.schedule(ms);
      this.o.connect();
    } else {
      this.set(v);
      if (v.status && v.status !== 'active')
        log.warn(`provider status: ${v.status}${v.earningsEnabled === false ? ' (earnings are not enabled yet)' : ''}.${detail ? ` ${detail}` : ''}`);
      else
        log.info(`provider status: ${v.status ?? 'ok'}${v.earningsEnabled !== undefined ? `, earnings ${v.earningsEnabled ? 'enabled' : 'not enabled'}` : ''}`);
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
