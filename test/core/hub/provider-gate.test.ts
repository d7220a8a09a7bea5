// ProviderGate against a real local HTTP server answering the Go ProviderStatusResponse: waits and
// re-checks while can_connect is false, connects once allowed, never connects on api_key_valid false,
// connects anyway when the status cannot be read, and stays quiet once stopped.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { memoryLog } from '../../../src/core/base/log';
import { ProviderGate, statusView } from '../../../src/core/hub/provider-status';
import { until } from '../../support/stack';

let server: http.Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
});

async function platform(answer: () => { code: number; body: unknown }): Promise<{ url: string; hits: () => number }> {
  let hits = 0;
  server = http.createServer((req, res) => {
    hits++;
    const a = answer();
    res.writeHead(a.code, { 'content-type': 'application/json' });
    res.end(typeof a.body === 'string' ? a.body : JSON.stringify(a.body));
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits: () => hits };
}

it('waits while can_connect is false, re-checking, and connects once it is true; stop() ends the checks', async () => {
  let canConnect = false;
  const p = await platform(() => ({
    code: 200,
    body: { status: canConnect ? 'active' : 'pending', can_connect: canConnect, api_key_valid: true, next_steps: ['wait'] },
  }));
  let connects = 0;
  const gate = new ProviderGate({ serviceUrl: () => p.url, key: () => 'sk-prov-x', log: memoryLog().child('s'), connect: () => connects++, waitRecheckMs: 50 });
  expect((await gate.start()).state).toBe('waiting');
  await until(() => p.hits() >= 3, 'two re-checks');
  expect(connects).toBe(0);
  canConnect = true;
  await until(() => connects === 1, 'connected once allowed');
  expect(gate.view()).toMatchObject({ state: 'ok', status: 'active' });
  gate.stop();
  const hits = p.hits();
  expect((await gate.check()).state).toBe('ok');
  expect(p.hits()).toBe(hits);
});

it('never connects with a key the platform calls invalid; connects anyway when the status is not readable', async () => {
  let mode: 'invalid' | 'garbage' = 'invalid';
  const p = await platform(() =>
    mode === 'invalid'
      ? { code: 401, body: { api_key_valid: false, can_connect: false, message: 'Invalid or revoked API key.' } }
      : { code: 502, body: '<html>bad gateway</html>' },
  );
  let connects = 0;
  const gate = new ProviderGate({ serviceUrl: () => p.url, key: () => 'sk-prov-x', log: memoryLog().child('s'), connect: () => connects++ });
  expect(await gate.start()).toMatchObject({ state: 'invalid_key', apiKeyValid: false, message: 'Invalid or revoked API key.' });
  expect(connects).toBe(0);
  mode = 'garbage';
  expect((await gate.check()).state).toBe('unreachable');
  expect(connects).toBe(1);
  gate.stop();
});

it('clips the platform texts and strips control characters', () => {
  const v = statusView('u', {
    httpStatus: 200,
    status: { status: 'pending\r\nX', message: 'a'.repeat(5000), next_steps: Array.from({ length: 30 }, (_, i) => `step ${i}\u0007`), can_connect: false },
  });
  expect(v.state).toBe('waiting');
  expect(v.status).toBe('pending  X');
  expect(v.message).toHaveLength(1000);
  expect(v.nextSteps).toHaveLength(20);
  expect(v.nextSteps[0]).toBe('step 0'); // cleaned: platform/next-steps.ts trims
});
