// One console reading another rig: the real agents, each behind its real console server. Adding a rig
// reads it first (a wrong address or token is said at once), its token goes to the secret store and
// nowhere else, a rig that goes away stays listed as unreachable with since when, the sums add up,
// and a rig is read only at the address the owner added (no redirects followed, no metadata addresses).
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConsoleServer } from '../../../src/core/console/server';
import type { FleetView } from '../../../src/shared/fleet';
import { call, chat, logEntries, registered, startStack, until, type Stack } from '../../support/stack';
import { startRigConsole } from '../../support/fleet';
import { createFleetToken } from '../../support/approvals';

let a: Stack;
let b: Stack;
let bConsole: ConsoleServer;
let bRead: string;

/** n requests through the stack's hub; resolves with the rig's own ledger totals for today once they are in. */
async function traffic(stack: Stack, n: number, maxTokens: number): Promise<{ requests: number; tokensIn: number; tokensOut: number }> {
  const model = stack.agent.snapshot().models[0]!.id;
  for (let i = 0; i < n; i++) {
    const res = await chat(stack.hub!, { model, max_tokens: maxTokens, messages: [{ role: 'user', content: `hello ${i}` }] });
    expect(res.status).toBe(200);
    await res.text();
  }
  await until(() => stack.agent.snapshot().today.requests === n, 'requests in the ledger');
  const { requests, tokensIn, tokensOut } = stack.agent.snapshot().today;
  return { requests, tokensIn, tokensOut };
}

beforeAll(async () => {
  [a, b] = await Promise.all([startStack(), startStack()]);
  await Promise.all([registered(a), registered(b)]);
  bConsole = await startRigConsole(b.agent);
  bRead = (await createFleetToken(b.agent, 'rig-a')).token;
});

afterAll(async () => {
  await bConsole?.close();
  await Promise.all([a?.close(), b?.close()]);
});

const rigB = (v: FleetView) => v.rigs.find((r) => !r.self);

describe('adding a rig', () => {
  it('refuses what cannot be read, with stable codes', async () => {
    const base = `http://127.0.0.1:${bConsole.port}`;
    await expect(call(a.agent, 'fleet.add', { url: base, token: 'swan-fleet-not-a-real-token-at-all' })).rejects.toMatchObject({
      code: 'invalid_args',
      message: expect.stringContaining('refused the token'),
    });
    await expect(call(a.agent, 'fleet.add', { url: base, token: 'short' })).rejects.toMatchObject({ code: 'invalid_args' });
    await expect(call(a.agent, 'fleet.add', { url: 'http://169.254.169.254/', token: bRead })).rejects.toMatchObject({
      code: 'invalid_args',
      message: expect.stringContaining('metadata'),
    });
    await expect(call(a.agent, 'fleet.add', { url: 'ftp://127.0.0.1:1', token: bRead })).rejects.toMatchObject({ code: 'invalid_args' });
    await expect(call(a.agent, 'fleet.add', { url: 'http://127.0.0.1:9', token: bRead })).rejects.toMatchObject({ code: 'unavailable' });
    expect((await call(a.agent, 'fleet.list', {})).rigs).toHaveLength(1);
  });

  it('never follows a redirect with the token', async () => {
    const seen: Array<string | undefined> = [];
    const elsewhere = http.createServer((req, res) => {
      seen.push(req.headers.authorization);
      res.end('{}');
    });
    await new Promise<void>((r) => elsewhere.listen(0, '127.0.0.1', r));
    const bouncer = http.createServer((_req, res) => {
      res.writeHead(302, { Location: `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}/api/fleet/v1/summary` });
      res.end();
    });
    await new Promise<void>((r) => bouncer.listen(0, '127.0.0.1', r));
    try {
      await expect(call(a.agent, 'fleet.add', { url: `http://127.0.0.1:${(bouncer.address() as AddressInfo).port}`, token: bRead })).rejects.toMatchObject({
        code: 'failed',
        message: expect.stringContaining('redirect'),
      });
      expect(seen).toEqual([]);
    } finally {
      bouncer.close();
      elsewhere.close();
    }
  });

  it('adds a rig from its pasted bookmark, keeps the token in the secret store only, and refuses it twice', async () => {
    const view = await call(a.agent, 'fleet.add', { url: `http://127.0.0.1:${bConsole.port}/?token=${bRead}`, label: 'garage' });
    const rig = rigB(view)!;
    expect(rig).toMatchObject({ status: 'ok', label: 'garage', url: `http://127.0.0.1:${bConsole.port}`, insecure: false });
    expect(rig.summary).toMatchObject({ nodeId: b.agent.identity.nodeId, access: 'read' });
    expect(fs.readFileSync(path.join(a.home, 'fleet.json'), 'utf8')).not.toContain(bRead);
    expect(fs.statSync(path.join(a.home, 'fleet.json')).mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(path.join(a.home, 'secrets.json'), 'utf8')).toContain(bRead);
    expect(JSON.stringify(await logEntries(a.agent))).not.toContain(bRead);
    await expect(call(a.agent, 'fleet.add', { url: `http://localhost:${bConsole.port}`, token: bRead })).rejects.toMatchObject({ code: 'already_exists' });
  });

  it('refuses this console itself', async () => {
    const aConsole = await startRigConsole(a.agent);
    try {
      await expect(call(a.agent, 'fleet.add', { url: `http://127.0.0.1:${aConsole.port}`, token: aConsole.token })).rejects.toMatchObject({
        code: 'already_exists',
        message: expect.stringContaining("this rig's own console"),
      });
    } finally {
      await aConsole.close();
    }
  });
});

describe('reading the fleet', () => {
  it("shows each rig's requests and tokens and their sums, and the ledgers summed for Usage", async () => {
    const [aToday, bToday] = await Promise.all([traffic(a, 2, 6), traffic(b, 3, 9)]);
    // The next read carries B's new figures (the reader polls every few seconds; poll now through the event).
    let view = await call(a.agent, 'fleet.list', {});
    await until(
      async () => {
        view = await call(a.agent, 'fleet.list', {});
        return rigB(view)?.summary?.today.requests === 3;
      },
      'B read again',
      10_000,
    );
    const self = view.rigs.find((r) => r.self)!;
    expect(self.summary!.today).toMatchObject(aToday);
    expect(rigB(view)!.summary!.today).toMatchObject(bToday);
    expect(view.totals).toMatchObject({ rigs: 2, reachable: 2, stale: 0 });
    expect(view.totals.today).toMatchObject({ requests: 5, tokensIn: aToday.tokensIn + bToday.tokensIn, tokensOut: aToday.tokensOut + bToday.tokensOut });
    expect(view.totals.month.requests).toBe(5);

    const usage = await call(a.agent, 'fleet.usage', {});
    expect(usage.rigs.map((r) => [r.self, r.status, r.usage?.today.requests])).toEqual([
      [true, 'ok', 2],
      [false, 'ok', 3],
    ]);
    expect(usage.totals.today).toMatchObject({ requests: 5, tokensIn: aToday.tokensIn + bToday.tokensIn, tokensOut: aToday.tokensOut + bToday.tokensOut });
    expect(usage.totals.last30.requests).toBe(5);
    // Each rig's figures stay its own: nothing of B is in A's ledger.
    expect(a.agent.snapshot().today.requests).toBe(2);
  });

  it('opens a rig added with a read-only token at its plain address (the owner signs in there)', async () => {
    const rig = rigB(await call(a.agent, 'fleet.list', {}))!;
    expect(await call(a.agent, 'fleet.openConsole', { id: rig.id })).toEqual({ url: `http://127.0.0.1:${bConsole.port}/`, signedIn: false });
  });

  it('keeps a rig that went away, as unreachable since then, with its last figures', async () => {
    const events: FleetView[] = [];
    const off = a.agent.subscribe((e) => {
      if (e.type === 'fleet') events.push(e.fleet);
    });
    const port = bConsole.port;
    const stoppedAt = Date.now();
    await bConsole.close();
    try {
      await until(() => events.some((v) => rigB(v)?.status === 'unreachable'), 'B unreachable', 10_000);
      const rig = rigB(events.find((v) => rigB(v)?.status === 'unreachable')!)!;
      expect(rig.errorCode).toBe('rig_unreachable');
      expect(rig.since).toBeGreaterThanOrEqual(stoppedAt);
      expect(rig.lastSeenAt).toBeLessThanOrEqual(rig.since);
      expect(rig.summary?.today.requests).toBe(3);
      const view = await call(a.agent, 'fleet.list', {});
      expect(view.totals).toMatchObject({ rigs: 2, reachable: 1, stale: 1 });
      expect((await call(a.agent, 'fleet.usage', {})).rigs[1]).toMatchObject({ status: 'unreachable' });
      // The owner hears of it once (log, webhook, notifications), not at every read that fails.
      const raised = a.agent.alerts.list().filter((x) => x.kind === 'rig_unreachable');
      expect(raised).toEqual([expect.objectContaining({ title: 'garage does not answer' })]);
    } finally {
      off();
    }
    // Back on the same port: read again, since when it answers.
    bConsole = await startRigConsole(b.agent, { port });
    await until(async () => rigB(await call(a.agent, 'fleet.list', {}))?.status === 'ok', 'B back', 10_000);
  });

  it('removes a rig and its token', async () => {
    const rig = rigB(await call(a.agent, 'fleet.list', {}))!;
    const view = await call(a.agent, 'fleet.remove', { id: rig.id });
    expect(view.rigs).toHaveLength(1);
    expect(fs.readFileSync(path.join(a.home, 'secrets.json'), 'utf8')).not.toContain(bRead);
    await expect(call(a.agent, 'fleet.remove', { id: rig.id })).rejects.toMatchObject({ code: 'not_found' });
  });
});

describe('a rig added with its console token', () => {
  it("opens that rig's console signed in, with a one-time code", async () => {
    const view = await call(a.agent, 'fleet.add', { url: `http://127.0.0.1:${bConsole.port}`, token: bConsole.token });
    const rig = rigB(view)!;
    expect(rig.summary?.access).toBe('full');
    const link = await call(a.agent, 'fleet.openConsole', { id: rig.id });
    expect(link.signedIn).toBe(true);
    expect(link.url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${bConsole.port}/\\?code=[A-Za-z0-9_-]+$`));
    const res = await fetch(link.url, { redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('set-cookie')).toMatch(/^swan_session_/);
  });
});
