// A failed request in plain words with a stable code, from real failures of Node's fetch: a name that does
// not resolve, a port nothing listens on, a deadline; never Node's raw "getaddrinfo ENOTFOUND".
import { describe, expect, it } from 'vitest';
import { networkFailure } from '../../../src/core/http/network-failure';
import { freePort } from '../../support/stack';

async function failureOf(url: string, timeoutMs = 5000): Promise<unknown> {
  return fetch(url, { signal: AbortSignal.timeout(timeoutMs) }).then(
    () => new Error('answered'),
    (e: unknown) => e,
  );
}

describe('networkFailure', () => {
  it('a name that does not resolve: offline_or_dns, in plain words', async () => {
    const f = networkFailure(await failureOf('http://no-such-host.invalid/'), 'no-such-host.invalid', 5000);
    expect(f.code).toBe('offline_or_dns');
    expect(f.words).not.toMatch(/getaddrinfo|ENOTFOUND|fetch failed/);
  });

  it('a port nothing listens on: refused', async () => {
    const port = await freePort();
    expect(networkFailure(await failureOf(`http://127.0.0.1:${port}/`), `127.0.0.1:${port}`, 5000).code).toBe('refused');
  });

  it('a deadline: timeout, with the seconds', () => {
    const e = new DOMException('The operation was aborted due to timeout', 'TimeoutError');
    expect(networkFailure(e, 'api.swanchain.io', 10_000)).toEqual({ code: 'timeout', words: 'api.swanchain.io did not answer within 10 s' });
  });

  it('anything else: other, never the raw text', () => {
    expect(networkFailure(new TypeError('fetch failed', { cause: { code: 'EWEIRD' } }), 'h', 1000)).toEqual({
      code: 'other',
      words: 'the connection to h failed',
    });
  });
});
