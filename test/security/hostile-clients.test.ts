// Hostile local clients against a CLI-run agent: another local server holding the console's session
// cookie, bridge calls nested deep, oversized and in floods, gateway requests of every such shape, a flood of
// half-sent requests at the gateway, and unauthenticated stream-v1 clients sending frame after frame. The agent
// stays up and registered; during the gateway flood a hub request completes and the console answers within
// 1 s; no secret leaves.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { get } from '../support/console/http';
import { pageProtocols, post, signIn } from '../support/console/page-session';
import { until } from '../support/stack';
import { SAFE_MODEL } from './support/hostile-engine';
import { consoleAnswer, expectUnharmed, FILE_LIMIT, startRig, type Rig } from './support/rig';

let rig: Rig;
beforeAll(async () => {
  rig = await startRig();
}, 60_000);
afterAll(async () => {
  await rig?.close();
});

const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;

/** Opens the bridge; resolves with the socket, or rejects with the HTTP status. */
function bridge(headers: Record<string, string>, protocols: string[] = [], query = ''): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${rig.consolePort}/bridge${query}`, protocols, { headers, maxPayload: 64 * 1024 * 1024 });
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    ws.once('error', reject);
  });
}

/** Sends raw text on a bridge socket and resolves with the next reply that carries `id` (or null when the id is unknown). */
function reply(ws: WebSocket, text: string, id: number | null): Promise<{ ok: boolean; code?: string }> {
  return new Promise((resolve) => {
    const on = (d: Buffer) => {
      const m = JSON.parse(String(d)) as { id?: unknown; reply?: { ok: boolean; code?: string } };
      if (!m.reply || m.id !== id) return;
      ws.off('message', on);
      resolve(m.reply);
    };
    ws.on('message', on);
    ws.send(text);
  });
}

describe('the console against another local server holding its cookie', () => {
  it("the cookie, replayed with the console's own Origin, opens no bridge, claims no page secret and reads nothing", async () => {
    const owner = await signIn(rig.consolePort, `/?token=${rig.token}`);
    const origin = `http://127.0.0.1:${rig.consolePort}`;
    // The owner's page works.
    const ws = await bridge({ cookie: owner.cookie, origin }, pageProtocols(owner));
    expect(await reply(ws, JSON.stringify({ id: 1, channel: 'settings.get', args: {} }), 1)).toMatchObject({ ok: true });
    ws.close();
    // What the other server can send: the cookie with any Origin and any guess of the page secret.
    await expect(bridge({ cookie: owner.cookie, origin })).rejects.toThrow('HTTP 401');
    await expect(bridge({ cookie: owner.cookie, origin }, ['swan-bridge', 'swan-page.guess'])).rejects.toThrow('HTTP 401');
    await expect(bridge({ cookie: owner.cookie, origin: 'http://127.0.0.1:8000' }, pageProtocols(owner))).rejects.toThrow('HTTP 403');
    const claim = await post(rig.consolePort, '/session/page', { cookie: owner.cookie, origin, 'x-swan-page': 'claim' });
    expect(claim.status).not.toBe(200);
    expect(claim.body).not.toContain(owner.page);
    expect((await get(rig.consolePort, '/metrics', { cookie: owner.cookie })).status).toBe(401);
    expect((await get(rig.consolePort, '/session', { cookie: owner.cookie })).status).toBe(401);
    await expectUnharmed(rig, 'a replayed session cookie');
  });

  it('a caller\'s "confirmation" fields do not send the key anywhere; the change waits for the owner', async () => {
    const ws = await bridge({ authorization: `Bearer ${rig.token}` });
    const sneaky = { patch: { hubUrl: 'ws://evil.example:8092/ws', confirmKeyDestination: ['evil.example:8092'], confirmInsecure: true } };
    expect(await reply(ws, JSON.stringify({ id: 1, channel: 'settings.save', args: sneaky }), 1)).toMatchObject({ ok: false, code: 'invalid_args' });
    expect(await reply(ws, JSON.stringify({ id: 2, channel: 'settings.save', args: { patch: { hubUrl: 'ws://evil.example:8092/ws' } } }), 2)).toMatchObject({
      ok: false,
      code: 'OWNER_CONFIRMATION_REQUIRED',
    });
    expect(await reply(ws, JSON.stringify({ id: 3, channel: 'gateway.keys.create', args: { name: 'stolen' } }), 3)).toMatchObject({
      ok: false,
      code: 'OWNER_CONFIRMATION_REQUIRED',
    });
    expect(await reply(ws, JSON.stringify({ id: 4, channel: 'engines.addEndpoint', args: { url: 'http://169.254.169.254/' } }), 4)).toMatchObject({
      ok: false,
      code: 'address_refused',
    });
    ws.close();
    await expectUnharmed(rig, 'settings.save with caller-set confirmations');
    expect(rig.hub.frames.filter((f) => f.type === 'register').length).toBe(rig.hub.registers);
  });
});

describe('bridge calls nested, oversized and in floods', () => {
  it('each is refused with a code; the socket and the agent carry on', async () => {
    const ws = await bridge({ authorization: `Bearer ${rig.token}` });
    expect(await reply(ws, `{"id":1,"channel":"settings.save","args":{"patch":${deep(5000)}}}`, null)).toMatchObject({ ok: false, code: 'malformed' });
    expect(
      await reply(ws, `{"id":2,"channel":"snapshot.get","args":{${Array.from({ length: 20_000 }, (_, i) => `"k${i}":0`).join(',')}}}`, null),
    ).toMatchObject({ ok: false, code: 'malformed' });
    expect(await reply(ws, JSON.stringify({ id: 3, channel: 'requests.text', args: { id: 'x'.repeat(900_000) } }), 3)).toMatchObject({
      ok: false,
      code: 'invalid_args',
    });
    // A flood: 3,000 calls at once get answers or a too_many refusal each; nothing else happens.
    const answers: string[] = [];
    ws.on('message', (d) => {
      // Event batches ({events}) come too; only replies count.
      if (String(d).startsWith('{"id"')) answers.push(String(d));
    });
    for (let i = 0; i < 3000; i++) ws.send(JSON.stringify({ id: 100 + i, channel: 'snapshot.get', args: {} }));
    await until(() => answers.length >= 3000, 'every flooded call answered', 30_000);
    const codes = new Set(answers.map((a) => (JSON.parse(a) as { reply?: { ok: boolean; code?: string } }).reply).map((r) => (r?.ok ? 'ok' : r?.code)));
    expect([...codes].filter((c) => c !== 'ok' && c !== 'too_many')).toEqual([]);
    // Over the 1 MB frame limit: that socket is closed (1009), the console is not.
    const closed = new Promise<number>((r) => ws.once('close', (c) => r(c)));
    ws.send(`{"id":9,"channel":"x","args":"${'x'.repeat(2 * 1024 * 1024)}"}`);
    expect(await closed).toBe(1009);
    await expectUnharmed(rig, 'hostile bridge calls');
  }, 60_000);
});

describe('gateway requests nested, oversized and wide', () => {
  const chat = (body: string) =>
    fetch(`http://127.0.0.1:${rig.gatewayPort}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${rig.gatewayKey}`, 'content-type': 'application/json' },
      body,
    }).then(async (r) => ({
      status: r.status,
      code: ((await r.json()) as { error?: { code?: string } }).error?.code,
    }));

  it('HTTP bodies are refused with a code before anything walks them', async () => {
    expect(await chat(`{"model":"${SAFE_MODEL}","messages":${deep(6000)}}`)).toEqual({ status: 400, code: 'json_too_deep' });
    expect(
      await chat(`{"model":"${SAFE_MODEL}","messages":[],${Array.from({ length: 120_000 }, (_, i) => `"k${i}":0`).join(',')}}`.slice(0, 1_000_000) + '}'),
    ).toMatchObject({ status: 400 });
    expect(await chat(`{"model":"${SAFE_MODEL}","messages":[{"role":"user","content":"${'x'.repeat(2 * 1024 * 1024)}"}]}`)).toMatchObject({ status: 413 });
    expect(await chat(`{"model":"${SAFE_MODEL}","messages":[{"role":"user","content":"hi"}]}`)).toMatchObject({ status: 200 });
    await expectUnharmed(rig, 'hostile gateway bodies');
  });

  it('WebSocket messages of both dialects, authenticated, nested deep: coded errors, connection kept', async () => {
    for (const [path, protocols, good] of [
      ['/v1/stream', ['stream-v1'], { type: 'describe_fleet' }],
      ['/v1/ws', [], { type: 'ping' }],
    ] as const) {
      const ws = new WebSocket(`ws://127.0.0.1:${rig.gatewayPort}${path}?api_key=${rig.gatewayKey}`, [...protocols]);
      const got: Array<{ type?: string; code?: string }> = [];
      ws.on('message', (d) => got.push(JSON.parse(String(d)) as { type?: string; code?: string }));
      await new Promise((r) => ws.once('open', r));
      ws.send(`{"type":"start","request_id":"d","model":"${SAFE_MODEL}","messages":${deep(6000)}}`);
      ws.send(JSON.stringify(good));
      await until(() => got.some((m) => m.type === 'fleet' || m.type === 'pong'), `${path} still answers`);
      expect(
        got.some((m) => m.type === 'error'),
        path,
      ).toBe(true);
      ws.close();
    }
    await expectUnharmed(rig, 'hostile gateway WebSocket messages');
  });
});

describe('a flood at the gateway', () => {
  it('unauthenticated stream-v1 clients get one answer each and are closed (no amplification)', async () => {
    const sockets = await Promise.all(
      Array.from({ length: 50 }, async () => {
        const ws = new WebSocket(`ws://127.0.0.1:${rig.gatewayPort}/v1/stream`, ['stream-v1']);
        let n = 0;
        ws.on('message', () => n++);
        ws.on('error', () => undefined);
        await new Promise((r) => ws.once('open', r));
        for (let i = 0; i < 200; i++) ws.send('{"type":"start"');
        await new Promise((r) => ws.once('close', r));
        return n;
      }),
    );
    expect(sockets.every((n) => n === 1)).toBe(true);
    await expectUnharmed(rig, 'unauthenticated stream-v1 floods');
  }, 60_000);

  it("2,000 half-sent requests (twice the agent's file limit): a hub request completes and the console answers within 1 s meanwhile; the gateway serves again after", async () => {
    const flood: net.Socket[] = [];
    try {
      for (let i = 0; i < 2 * FILE_LIMIT; i++) {
        const s = net.connect(rig.gatewayPort, '127.0.0.1');
        s.on('error', () => undefined);
        s.resume();
        s.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:${rig.gatewayPort}\r\nAuthorization: Bearer x\r\nContent-Le`);
        flood.push(s);
      }
      await Promise.all(flood.map((s) => new Promise((r) => (s.connecting ? s.once('connect', r).once('close', r) : r(undefined)))));
      // The gateway holds what its budget allows (a quarter of the file limit) and closes the rest at once.
      await until(() => flood.filter((s) => !s.destroyed).length <= FILE_LIMIT / 4, 'the gateway closes what is past its budget', 20_000);
      const { end } = await rig.hub.inference('during-flood', SAFE_MODEL, true);
      expect(end.payload?.status_code ?? 200).toBe(200);
      for (let i = 0; i < 5; i++) {
        const c = await consoleAnswer(rig);
        expect(c.status).toBe(204);
        expect(c.ms).toBeLessThan(1000);
      }
    } finally {
      for (const s of flood) s.destroy();
    }
    await until(
      async () =>
        (await get(rig.gatewayPort, '/v1/models', { authorization: `Bearer ${rig.gatewayKey}` }).then(
          (r) => r.status,
          () => 0,
        )) === 200,
      'the gateway serves again',
      15_000,
    );
    await expectUnharmed(rig, 'a gateway flood');
  }, 90_000);
});

describe('a flood at the console', () => {
  it('past its own budget the console refuses connections; the hub link and the gateway are untouched, and it answers again after', async () => {
    const flood: net.Socket[] = [];
    try {
      for (let i = 0; i < FILE_LIMIT; i++) {
        const s = net.connect(rig.consolePort, '127.0.0.1');
        s.on('error', () => undefined);
        s.resume();
        s.write(`GET / HTTP/1.1\r\nHost: 127.0.0.1:${rig.consolePort}\r\nCook`);
        flood.push(s);
      }
      await until(() => flood.filter((s) => !s.destroyed).length <= FILE_LIMIT / 4, 'the console closes what is past its budget', 20_000);
      const { end } = await rig.hub.inference('during-console-flood', SAFE_MODEL, false);
      expect(end.payload?.status_code ?? 200).toBe(200);
      expect((await get(rig.gatewayPort, '/v1/models', { authorization: `Bearer ${rig.gatewayKey}` })).status).toBe(200);
    } finally {
      for (const s of flood) s.destroy();
    }
    await until(
      async () =>
        (await consoleAnswer(rig).then(
          (c) => c.status,
          () => 0,
        )) === 204,
      'the console answers again',
      15_000,
    );
    await expectUnharmed(rig, 'a console flood');
  }, 90_000);
});

describe('the console redirect', () => {
  it('a sign-in link whose path normalises to another host is refused, not redirected', async () => {
    const r = await get(rig.consolePort, `/.//evil.example/x?token=${rig.token}`);
    expect(r.status).toBe(400);
    expect(r.headers.location).toBeUndefined();
  });
});
