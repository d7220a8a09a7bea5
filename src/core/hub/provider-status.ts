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

export async function checkProviderKey(serviceUrl: string, key: string): Promise<{ valid: boolean; message: string }> {
  const r = await fetchProviderStatus(serviceUrl, key.trim());
  if (r.error) return { valid: false, message: `The key could not be checked: ${r.error}. Check the service URL in Settings and your connection.` };
  if (r.httpStatus === 401 || r.httpStatus === 403 || r.status?.api_key_valid === false) {
    return { valid: false, message: r.status?.message ?? 'The hub does not accept this key. Copy it again from your Swan Inference provider page.' };
  }
  const name = r.status?.name ? ` for "${r.status.name}"` : '';
  return { valid: true, message: r.status?.message ?? `Key accepted${name}.` };
}
