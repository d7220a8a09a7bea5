// The fleet API of a real agent behind its real console server: what a read-only fleet token reads, and
// everything it cannot do. The bridge (every verb that changes settings, keys or models), the console UI,
// /metrics, the console-link route and every non-GET method refuse it, and the rig's settings, secrets,
// tokens and models are byte-for-byte what they were after every attempt.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { INVOKE_CHANNELS } from '../../../src/shared/bridge/channels';
import type { RigSummary, RigUsage } from '../../../src/shared/fleet';
import { FLEET_TOKEN_PREFIX } from '../../../src/core/fleet/tokens';
import { call, chat, registered, startStack, until, type Stack } from '../../support/stack';
import { bearer, request, startRigConsole } from '../../support/fleet';
import { createFleetToken } from '../../support/approvals';
import type { ConsoleServer } from '../../../src/core/console/server';

let stack: Stack;
let con: ConsoleServer;
let readToken: string;
let model: string;

beforeAll(async () => {
  stack = await startStack({ metrics: true });
  await registered(stack);
  con = await startRigConsole(stack.agent);
  readToken = (await createFleetToken(stack.agent, 'garage-console')).token;
  model = stack.agent.snapshot().models[0]!.id;
  const res = await chat(stack.hub!, { model, max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] });
  expect(res.status).toBe(200);
  await res.text();
  await until(() => stack.agent.snapshot().today.requests === 1, 'the request is in the ledger');
});

afterAll(async () => {
  await con?.close();
  await stack?.close();
});

/** The rig's state a fleet token must never change: its files and what the bridge says. */
async function rigState(): Promise<string> {
  const files = ['settings.json', 'secrets.json', 'gateway-keys.json', 'fleet-tokens.json', 'fleet.json', 'models.json', 'config.toml'].map((f) => {
    const p = path.join(stack.home, f);
    return `${f}:${fs.existsSync(p) ? fs.readFileSync(p, 'utf8') : '-'}`;
  });
  const snap = stack.agent.snapshot();
  return JSON.stringify({
    files,
    models: snap.models.map((m) => [m.id, m.enabled, m.maxConcurrent, m.maxQueue]),
    paused: snap.pause.paused,
    settings: await call(stack.agent, 'settings.get', {}),
    keys: await call(stack.agent, 'gateway.keys.list', {}),
    tokens: (await call(stack.agent, 'fleet.tokens.list', {})).map((t) => t.name),
  });
}

/** Tries to open the bridge and send one invoke; resolves with the HTTP status the upgrade got (101 = opened). */
function bridgeAttempt(pathAndQuery: string, headers: Record<string, string>, channel: string, args: unknown): Promise<number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`ws://127.0.0.1:${con.port}${pathAndQuery}`, { headers: { origin: `http://127.0.0.1:${con.port}`, ...headers } });
    ws.on('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      res.resume();
      ws.terminate();
    });
    ws.on('open', () => {
      ws.send(JSON.stringify({ id: 1, channel, args }));
      ws.on('message', () => {
        ws.close();
        resolve(101);
      });
    });
    ws.on('error', () => undefined);
  });
}

describe('a read-only fleet token', () => {
  it('is made once, shown once, kept only as a hash', async () => {
    expect(readToken.startsWith(FLEET_TOKEN_PREFIX)).toBe(true);
    const file = fs.readFileSync(path.join(stack.home, 'fleet-tokens.json'), 'utf8');
    expect(file).not.toContain(readToken);
    expect(fs.statSync(path.join(stack.home, 'fleet-tokens.json')).mode & 0o777).toBe(0o600);
    expect(await call(stack.agent, 'fleet.tokens.list', {})).toEqual([expect.objectContaining({ name: 'garage-console', scope: 'read' })]);
  });

  it('reads the summary, the usage and the metrics', async () => {
    const s = await request(con.port, 'GET', '/api/fleet/v1/summary', bearer(readToken));
    expect(s.status).toBe(200);
    expect(s.headers['cache-control']).toBe('no-store');
    const summary = JSON.parse(s.body) as RigSummary;
    expect(summary).toMatchObject({ api: 1, access: 'read', nodeId: stack.agent.identity.nodeId, nodeName: 'test-node', link: { state: 'connected' } });
    expect(summary.today.requests).toBe(1);
    expect(summary.month.requests).toBe(1);
    expect(summary.models.map((m) => m.id)).toContain(model);

    const u = await request(con.port, 'GET', '/api/fleet/v1/usage', bearer(readToken));
    expect(u.status).toBe(200);
    const usage = JSON.parse(u.body) as RigUsage;
    expect(usage.today).toMatchObject({ requests: 1, tokensOut: summary.today.tokensOut });
    expect(usage.last30.requests).toBe(1);
    expect(usage.perModel30.map((m) => m.model)).toEqual([model]);

    const m = await request(con.port, 'GET', '/api/fleet/v1/metrics', bearer(readToken));
    expect(m.status).toBe(200);
    expect(m.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(m.body).toMatch(new RegExp(`swan_requests_total\\{[^}]*outcome="ok"[^}]*\\} 1`));
  });

  it('cannot open the bridge for any verb, by header, query or as a session', async () => {
    const before = await rigState();
    const args: Record<string, unknown> = {
      'settings.save': { patch: { nodeName: 'taken-over' } },
      'models.setEnabled': { model, enabled: false },
      'gateway.keys.create': { name: 'evil' },
      'fleet.tokens.create': { name: 'more' },
      'serving.pause': {},
    };
    for (const channel of INVOKE_CHANNELS) {
      expect(await bridgeAttempt('/bridge', bearer(readToken), channel, args[channel] ?? {}), channel).toBe(401);
    }
    expect(await bridgeAttempt(`/bridge?token=${readToken}`, {}, 'settings.save', args['settings.save'])).toBe(401);
    // No session from it either: the UI with the token in the address or the header is refused, no cookie set.
    for (const [pathName, headers] of [
      [`/?token=${readToken}`, {}],
      ['/', bearer(readToken)],
      ['/session', bearer(readToken)],
    ] as const) {
      const r = await request(con.port, 'GET', pathName, headers);
      expect(r.status, pathName).toBe(401);
      expect(r.headers['set-cookie']).toBeUndefined();
    }
    expect(await rigState()).toBe(before);
  });

  it("is refused by /metrics (the console token's), console-link and every method but GET", async () => {
    const before = await rigState();
    expect((await request(con.port, 'GET', '/metrics', bearer(readToken))).status).toBe(401);
    const link = await request(con.port, 'POST', '/api/fleet/v1/console-link', bearer(readToken));
    expect(link.status).toBe(403);
    expect(JSON.parse(link.body)).toMatchObject({ code: 'read_only' });
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      for (const route of ['summary', 'usage', 'metrics']) {
        const r = await request(
          con.port,
          method,
          `/api/fleet/v1/${route}`,
          { ...bearer(readToken), 'content-type': 'application/json' },
          JSON.stringify({ nodeName: 'x', enabled: false }),
        );
        expect(r.status, `${method} ${route}`).toBe(405);
        expect(JSON.parse(r.body)).toMatchObject({ code: 'method_not_allowed' });
      }
    }
    expect(await rigState()).toBe(before);
  });

  it('is refused in the address, even where the header would be accepted', async () => {
    const r = await request(con.port, 'GET', `/api/fleet/v1/summary?token=${readToken}`);
    expect(r.status).toBe(400);
    expect(JSON.parse(r.body)).toMatchObject({ code: 'token_in_url' });
  });

  it('stops working the moment it is revoked, even by another process (the CLI)', async () => {
    const other = (await createFleetToken(stack.agent, 'short-lived')).token;
    expect((await request(con.port, 'GET', '/api/fleet/v1/summary', bearer(other))).status).toBe(200);
    // Another holder of the file (the CLI's FleetTokens) revokes it.
    const { FleetTokens } = await import('../../../src/core/fleet/tokens');
    expect(new FleetTokens(stack.home).revoke('short-lived')).toBe(true);
    const r = await request(con.port, 'GET', '/api/fleet/v1/summary', bearer(other));
    expect(r.status).toBe(401);
    expect(JSON.parse(r.body)).toMatchObject({ code: 'unauthorized' });
  });
});

describe('the console token', () => {
  it('reads with full access and opens the console signed in, once', async () => {
    const s = JSON.parse((await request(con.port, 'GET', '/api/fleet/v1/summary', bearer(con.token))).body) as RigSummary;
    expect(s.access).toBe('full');
    const link = await request(con.port, 'POST', '/api/fleet/v1/console-link', bearer(con.token));
    expect(link.status).toBe(200);
    const { path: linkPath } = JSON.parse(link.body) as { path: string };
    expect(linkPath).toMatch(/^\/\?code=[A-Za-z0-9_-]+$/);
    const first = await request(con.port, 'GET', linkPath);
    expect(first.status).toBe(302);
    expect(first.headers['set-cookie']?.[0]).toMatch(/^swan_session_\d+=/);
    expect((await request(con.port, 'GET', linkPath)).status).toBe(401);
  });

  it('nothing without a token', async () => {
    for (const route of ['summary', 'usage', 'metrics', 'console-link']) {
      const r = await request(con.port, 'GET', `/api/fleet/v1/${route}`);
      expect(r.status).toBe(401);
      expect(r.headers['www-authenticate']).toMatch(/^Bearer/);
    }
    expect((await request(con.port, 'GET', '/api/fleet/v1/nothing', bearer(readToken))).status).toBe(404);
  });
});
