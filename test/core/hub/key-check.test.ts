// The key check can fail (issue 40): only an answer in the platform's status shape counts. A server that is
// not a Swan hub answers JSON too (llama.cpp's `{"error": {"code": 404…}}` at the ServiceURL): that must read
// "does not answer like a Swan hub", with its own code, never "Key accepted" or "Can connect".
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { checkProviderKey, fetchProviderStatus, statusView } from '../../../src/core/hub/provider-status';
import { PlatformApi } from '../../support/platform-api';
import { freePort } from '../../support/stack';
import { Llama, LLAMA_PRESENT } from '../../support/live/llama';

const KEY = 'sk-prov-keycheck-1234567890';
/** What llama-server answers for a route it does not have (../shared/engines/llama.cpp, any unknown path). */
const LLAMA_404 = JSON.stringify({ error: { code: 404, message: 'File Not Found', type: 'not_found_error' } });

describe('checkProviderKey against stand-ins', () => {
  let api: PlatformApi;
  beforeAll(async () => {
    api = await PlatformApi.start(KEY);
  });
  afterAll(() => api.close());
  afterEach(() => {
    api.routes['/api/v1/provider/status'] = {
      kind: 'json',
      body: { provider_id: 'p1', name: 'test', status: 'active', can_connect: true, api_key_valid: true, message: 'ok', earnings_enabled: true },
    };
  });

  it("the platform's status shape with api_key_valid true: accepted", async () => {
    expect(await checkProviderKey(api.url, KEY)).toMatchObject({ valid: true, code: 'key_accepted' });
  });

  it('a key the platform refuses: refused', async () => {
    expect(await checkProviderKey(api.url, 'sk-prov-wrong-1234567890')).toMatchObject({ valid: false, code: 'key_refused' });
  });

  it('JSON that is not the status shape (a JSON 404, an empty object, a 200 of something else): not a Swan hub', async () => {
    api.routes['/api/v1/provider/status'] = { kind: 'status', status: 404, body: LLAMA_404 };
    const r = await checkProviderKey(api.url, KEY);
    expect(r).toMatchObject({ valid: false, code: 'not_a_hub' });
    expect(r.message).toContain('does not answer like a Swan hub (HTTP 404)');
    expect(r.message).not.toMatch(/accepted/i);
    api.routes['/api/v1/provider/status'] = { kind: 'json', body: {} };
    expect(await checkProviderKey(api.url, KEY)).toMatchObject({ valid: false, code: 'not_a_hub' });
    api.routes['/api/v1/provider/status'] = { kind: 'json', body: { object: 'list', data: [] } };
    expect(await checkProviderKey(api.url, KEY)).toMatchObject({ valid: false, code: 'not_a_hub' });
    // The gate's view: not "ok" (it would read "Can connect"), but unreachable with the reason.
    const v = statusView(`${api.url}/api/v1/provider/status`, await fetchProviderStatus(api.url, KEY));
    expect(v.state).toBe('unreachable');
    expect(v.error).toContain('does not answer like a Swan hub');
  });

  it('nothing listening: not checked, said as such', async () => {
    const port = await freePort();
    expect(await checkProviderKey(`http://127.0.0.1:${port}`, KEY)).toMatchObject({ valid: false, code: 'key_unchecked' });
  });
});

describe.skipIf(!LLAMA_PRESENT)('checkProviderKey with a real llama-server as the ServiceURL', () => {
  let llama: Llama;
  beforeAll(async () => {
    llama = new Llama(await freePort(), ['-np', '1']);
    await llama.start();
  }, 60_000);
  afterAll(() => llama?.kill());

  it('is not a Swan hub: the key is never "accepted", the gate never "ok"', async () => {
    const r = await checkProviderKey(llama.url, KEY);
    expect(r).toMatchObject({ valid: false, code: 'not_a_hub' });
    expect(r.message).toContain('(HTTP 404)');
    expect(statusView(llama.url, await fetchProviderStatus(llama.url, KEY)).state).toBe('unreachable');
  });
});

if (!LLAMA_PRESENT) it.skip('real llama-server: skipped, ../shared/engines/llama.cpp is absent', () => {});
