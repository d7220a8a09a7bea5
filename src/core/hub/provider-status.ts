// Pre-connect check of a provider key: GET {ServiceURL}/api/v1/provider/status with the key as a
// Bearer token. The hub answers {provider_id, name, status, can_connect, api_key_valid, message,
// earnings_enabled, …}. Used by onboarding ("check key"), `doctor`, and for earnings_enabled.
import { z } from 'zod';

const statusSchema = z
  .object({
    provider_id: z.string().optional(),
    name: z.string().optional(),
    status: z.string().optional(),
    can_connect: z.boolean().optional(),
    api_key_valid: z.boolean().optional(),
    message: z.string().optional(),
    earnings_enabled: z.boolean().optional(),
  })
  .passthrough();
export type ProviderStatus = z.infer<typeof statusSchema>;

export async function fetchProviderStatus(serviceUrl: string, key: string, timeoutMs = 5000): Promise<{ status?: ProviderStatus; httpStatus?: number; error?: string }> {
  const url = `${serviceUrl.replace(/\/+$/, '')}/api/v1/provider/status`;
  try {
    const res = await fetch(url, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(timeoutMs) });
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return { httpStatus: res.status, error: `${url} answered HTTP ${res.status} with something that is not JSON` };
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
export interface KeyStatusDetail {
  status?: string;
  canConnect?: boolean;
  step?: number;
  totalSteps?: number;
  stepLabel?: string;
  warning?: string;
  nextSteps: string[];
}

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
