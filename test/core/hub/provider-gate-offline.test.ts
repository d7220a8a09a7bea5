// A key saved while the platform cannot be reached is checked once it answers again: the ProviderGate keeps
// asking (backing off) while the status is unreachable, connects anyway meanwhile, and the key check says
// "unreachable" in plain words instead of refusing the key.
import http from 'node:http';
import { afterEach, expect, it } from 'vitest';
import { memoryLog } from '../../../src/core/base/log';
import { checkProviderKey, ProviderGate } from '../../../src/core/hub/provider-status';
import { freePort, until } from '../../support/stack';

let server: http.Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
});

it('re-checks an unreachable platform until it answers, then shows its word', async () => {
  const port = await freePort();
  let connects = 0;
  const log = memoryLog();
  const gate = new ProviderGate({
    serviceUrl: () => `http://127.0.0.1:${port}`,
    key: () => 'sk-prov-x',
    log: log.child('s'),
    connect: () => connects++,
    unreachableRecheckMs: 50,
  });
  const first = await gate.start();
  expect(first.state).toBe('unreachable');
  expect(first.error).not.toMatch(/ECONNREFUSED|fetch failed/);
  expect(first.nextCheckAt).toBeGreaterThan(Date.now() - 1000);
  expect(connects).toBe(1); // connects anyway, as the Go provider does
  await until(
    () => log.entries(500, 'debug').some((l) => l.level === 'debug' && l.msg.includes('could not read the provider status')),
    'a re-check while still unreachable',
  );
  server = http.createServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'active', can_connect: true, api_key_valid: true })),
  );
  await new Promise<void>((r) => server!.listen(port, '127.0.0.1', r));
  await until(() => gate.view().state === 'ok', 'checked once the platform answers');
  expect(gate.view().status).toBe('active');
  gate.stop();
  // Said once per outage, not at every re-check.
  expect(log.entries(500, 'warn').filter((l) => l.msg.includes('could not read the provider status'))).toHaveLength(1);
});

it('a key that cannot be checked is "unreachable", not refused', async () => {
  const r = await checkProviderKey(`http://127.0.0.1:${await freePort()}`, 'sk-prov-x');
  expect(r).toMatchObject({ valid: false, unreachable: true });
  expect(r.message).not.toMatch(/ECONNREFUSED|fetch failed|getaddrinfo/);
});
