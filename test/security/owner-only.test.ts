// Issue 42: nobody but the owner, by construction. Each attack is one a local program, a page's server or a
// hostile peer made against the running CLI, and each failed only when a rule trusted something such a
// party can replay. The browser half of the session attack (a real Chromium page on another port) is
// e2e/session-takeover.spec.ts.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { get } from '../support/console/http';
import { pageProtocols, post, signIn } from '../support/console/page-session';
import { tempHome, until } from '../support/stack';
import { writeFileAtomic } from '../../src/core/config/atomic-file';
import { ensureHome } from '../../src/core/config/home';
import { FleetTokens } from '../../src/core/fleet/tokens';
import { expectUnharmed, PROVIDER_KEY, startRig, type Rig } from './support/rig';

let rig: Rig;
beforeAll(async () => {
  rig = await startRig();
}, 60_000);
afterAll(async () => {
  await rig?.close();
});

/** Opens the bridge; resolves with the socket, or rejects with the HTTP status. */
function bridge(headers: Record<string, string>, protocols: string[] = []): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${rig.consolePort}/bridge`, protocols, { headers });
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    ws.once('error', reject);
  });
}

describe('High 1: a server on another loopback port that receives the session cookie at sign-in', () => {
  it("replaying everything it received, before the console's page loaded, becomes no session", async () => {
    // The owner opens a console link: the browser gets the cookie (and the redirect) from the console.
    const signIn = await get(rig.consolePort, `/?token=${rig.token}`);
    expect(signIn.status).toBe(302);
    const cookie = signIn.headers['set-cookie']![0]!.split(';')[0]!;
    // Browsers send that cookie to every port of 127.0.0.1: the attacker's server has it at once, and sends
    // whatever it likes with it (the console's Origin, the old claim header, any subprotocol) before the
    // console's own page has loaded.
    const origin = `http://127.0.0.1:${rig.consolePort}`;
    const replayed = { cookie, origin, 'x-swan-page': 'claim', 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'cors', referer: `${origin}/` };
    const answers = [
      await post(rig.consolePort, '/session/page', replayed),
      await get(rig.consolePort, '/session/page', replayed),
      await get(rig.consolePort, '/session', replayed),
      await get(rig.consolePort, '/', replayed),
    ];
    // Whatever a claim handed out is what it would use in the bridge handshake.
    const claimed = answers.map((a) => /"page":"([A-Za-z0-9_-]+)"/.exec(a.body)?.[1]).find(Boolean);
    const protocols = ['swan-bridge', ...(claimed ? [`swan-page.${claimed}`] : [])];
    const opened = await bridge({ cookie, origin }, protocols).then(
      (ws) => {
        ws.close();
        return 'open';
      },
      (e: Error) => e.message,
    );
    expect(claimed, 'a replayed cookie was handed the page secret').toBeUndefined();
    expect(opened).toBe('HTTP 401');
    // The owner's page, which read its secret from the redirect's fragment, is the session.
    const page = signIn.headers.location?.split('#swan-page=')[1];
    expect(page).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    const owner = await bridge({ cookie, origin }, ['swan-bridge', `swan-page.${page}`]);
    owner.close();
    await expectUnharmed(rig, 'a session replay at sign-in');
  });
});

/** Sends one bridge call on a program's socket (the console token) and resolves with its reply. */
async function call(channel: string, args: unknown): Promise<{ ok: boolean; code?: string; value?: unknown }> {
  const ws = await bridge({ authorization: `Bearer ${rig.token}` });
  try {
    return await new Promise((resolve) => {
      ws.on('message', (d: Buffer) => {
        const m = JSON.parse(String(d)) as { id?: number; reply?: { ok: boolean; code?: string; value?: unknown } };
        if (m.id === 1 && m.reply) resolve(m.reply);
      });
      ws.send(JSON.stringify({ id: 1, channel, args }));
    });
  } finally {
    ws.close();
  }
}

describe('High 2: a decoy key moves the provider key', () => {
  it("a typed decoy key with the attacker's address, then cleared, does not send config.toml's key there: the owner is asked", async () => {
    // The attacker's platform API: it records every credential it is sent.
    const seen: string[] = [];
    const thief = http.createServer((req, res) => {
      seen.push(`${req.headers.authorization ?? ''} ${req.url ?? ''}`);
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => thief.listen(0, '127.0.0.1', r));
    const thiefUrl = `http://127.0.0.1:${(thief.address() as AddressInfo).port}`;
    try {
      // A typed key counts as the owner's word, for that key only.
      const decoy = await call('settings.save', { patch: { hubUrl: rig.hub.wsUrl, serviceUrl: thiefUrl, providerKey: 'decoy-key-12345678' } });
      expect(decoy).toMatchObject({ ok: true });
      // Cleared: the key in use falls back to config.toml's ApiKey, which nobody allowed to go to the thief.
      const cleared = await call('settings.save', { patch: { providerKey: '' } });
      expect(cleared).toMatchObject({ ok: false, code: 'OWNER_CONFIRMATION_REQUIRED' });
      // A reload of anything (the provider gate's next check) still finds the key held for that host.
      const status = await call('providerStatus.refresh', {});
      expect(JSON.stringify(status)).not.toContain(PROVIDER_KEY);
      expect(
        seen.some((s) => s.includes(PROVIDER_KEY)),
        "the provider key reached the attacker's server",
      ).toBe(false);
    } finally {
      // The owner puts things back, typing the key (allowed for the hosts it goes to).
      expect(await call('settings.save', { patch: { serviceUrl: rig.platform.url, providerKey: PROVIDER_KEY } })).toMatchObject({ ok: true });
      await new Promise<void>((r) => {
        thief.close(() => r());
        thief.closeAllConnections();
      });
    }
    expect(seen.some((s) => s.includes(PROVIDER_KEY))).toBe(false);
    await expectUnharmed(rig, 'a decoy key');
  });
});

/** A console page's socket that keeps everything it hears, and sends calls with ids. */
async function listeningPage(): Promise<{
  heard: string[];
  call: (
    id: number,
    channel: string,
    args: unknown,
  ) => Promise<{ ok: boolean; code?: string; value?: unknown; confirmation?: { approvalId: string; code: string; grant?: string } }>;
  close: () => void;
}> {
  const s = await signIn(rig.consolePort, `/?token=${rig.token}`);
  const ws = await bridge({ cookie: s.cookie, origin: s.origin }, pageProtocols(s));
  const heard: string[] = [];
  ws.on('message', (d: Buffer) => heard.push(String(d)));
  return {
    heard,
    call: (id, channel, args) =>
      new Promise((resolve) => {
        const on = (d: Buffer) => {
          const m = JSON.parse(String(d)) as {
            id?: number;
            reply?: { ok: boolean; code?: string; value?: unknown; confirmation?: { approvalId: string; code: string; grant?: string } };
          };
          if (m.id !== id || !m.reply) return;
          ws.off('message', on);
          resolve(m.reply);
        };
        ws.on('message', on);
        ws.send(JSON.stringify({ id, channel, args }));
      }),
    close: () => ws.close(),
  };
}

/** The owner approves as `swan-provider approve CODE` does: a decision file in <home>/approvals/. */
function ownerApproves(approvalId: string): void {
  const file = path.join(rig.home, 'approvals', `${approvalId}.decision`);
  fs.writeFileSync(`${file}.tmp`, 'approve');
  fs.renameSync(`${file}.tmp`, file);
}

describe('Medium 4: an approved grant redeemed by another console session', () => {
  for (const [channel, kind] of [
    ['gateway.keys.create', 'gateway key'],
    ['fleet.tokens.create', 'fleet token'],
  ] as const) {
    it(`a ${kind} the owner approved for one session is made only for that session`, async () => {
      const owner = await listeningPage();
      const other = await listeningPage();
      try {
        const name = `granted-${kind.replace(' ', '-')}`;
        const asked = await owner.call(1, channel, { name });
        expect(asked).toMatchObject({ ok: false, code: 'OWNER_CONFIRMATION_REQUIRED' });
        const { approvalId, grant } = asked.confirmation!;
        ownerApproves(approvalId);
        // Every console socket hears that it was approved, with its id (the page that asked matches on it).
        await until(() => other.heard.some((t) => t.includes(approvalId) && t.includes('approved')), 'the approval event', 15_000);
        // The other session knows the id and the name (the log says it) and asks first: nothing is made.
        const stolen = await other.call(2, channel, { name, approvalId });
        const guessed = await other.call(3, channel, { name, grant: approvalId.padEnd(32, 'A') });
        expect(stolen.ok, 'another session redeemed the grant with the broadcast id').toBe(false);
        expect(guessed.ok).toBe(false);
        expect(other.heard.join('\n')).not.toContain(grant);
        // The session that asked gets it, once.
        const made = await owner.call(4, channel, { name, grant });
        expect(made).toMatchObject({ ok: true });
        expect(await owner.call(5, channel.replace('create', 'revoke'), { name })).toMatchObject({ ok: true });
      } finally {
        owner.close();
        other.close();
      }
    });
  }
});

describe('Medium 7: refused gateway requests cannot fill the disk through the log', () => {
  it('2,000 refused requests with 15 KB client-chosen paths and Origins add a few KB to the log, not 30 MB', async () => {
    const logFile = path.join(rig.home, 'logs', 'agent.jsonl');
    const before = fs.statSync(logFile).size;
    const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
    const one = (i: number) =>
      new Promise<number>((resolve, reject) => {
        const req = http.request(
          {
            host: '127.0.0.1',
            port: rig.gatewayPort,
            path: `/v1/models/${'A'.repeat(15 * 1024)}\n${i}`.replace('\n', '%0A'),
            agent,
            headers: { origin: `http://evil.example/${'B'.repeat(512)}`, host: `127.0.0.1:${rig.gatewayPort}` },
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          },
        );
        req.on('error', reject);
        req.end();
      });
    const statuses: number[] = [];
    await Promise.all(
      Array.from({ length: 8 }, async (_, w) => {
        for (let i = w; i < 2000; i += 8) statuses.push(await one(i));
      }),
    );
    agent.destroy();
    expect(statuses.every((s) => s === 403)).toBe(true);
    // The agent writes what it logs at once (pino to a file): what it wrote for these is there now.
    await until(() => fs.statSync(logFile).size > before, 'the refusals logged', 10_000);
    const grown = fs.statSync(logFile).size - before;
    expect(grown, `the log grew ${grown} bytes`).toBeLessThan(256 * 1024);
    await expectUnharmed(rig, 'a flood of refused gateway requests');
  });
});

describe('Low: text from outside cannot forge a terminal line', () => {
  it('a hub notice with line breaks prints as one line: no fake console link of its own', async () => {
    const fake = 'console: http://127.0.0.1:1/?code=FORGED-LINK';
    for (const br of ['\n', '\r\n', '\u2028']) {
      await rig.hub.sendRaw(
        JSON.stringify({ type: 'notice', payload: { event: 'payout_pending', severity: 'warning', message: `all fine${br}${fake}${br}` } }),
      );
    }
    await until(() => rig.output().split('FORGED-LINK').length > 3, 'the notices printed', 15_000);
    const lines = rig.output().split(/\r?\n|\u2028/);
    const forged = lines.filter((l) => l.includes('FORGED-LINK'));
    // Each is inside a log line (time, level, subsystem first), never a line of its own.
    expect(forged.length).toBeGreaterThan(0);
    expect(forged.filter((l) => !/^\d{2}:\d{2}:\d{2} (DEBUG|INFO|WARN|ERROR) /.test(l))).toEqual([]);
    await expectUnharmed(rig, 'notices with line breaks');
  });
});

/** Every folder and file under `dir` (links not followed), with its permission bits. */
function modesUnder(dir: string): Array<{ p: string; dir: boolean; mode: number }> {
  const out: Array<{ p: string; dir: boolean; mode: number }> = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push({ p, dir: true, mode: fs.statSync(p).mode & 0o777 }, ...modesUnder(p));
    else if (e.isFile()) out.push({ p, dir: false, mode: fs.statSync(p).mode & 0o777 });
  }
  return out;
}

describe.skipIf(process.platform === 'win32')("Low: every folder under the home is the owner's alone", () => {
  it("folders made for the agent's files (cache/, weights/…) are 0700, and one an older version left open is tightened", () => {
    const home = tempHome('swan-modes-');
    try {
      writeFileAtomic(path.join(home, 'cache', 'stats.json'), '{}');
      writeFileAtomic(path.join(home, 'weights', 'manifests', 'org', 'm.json'), '{}');
      for (const m of modesUnder(home)) expect(m.mode.toString(8), m.p).toBe(m.dir ? '700' : '600');
      fs.chmodSync(path.join(home, 'cache'), 0o755);
      ensureHome(home);
      expect((fs.statSync(path.join(home, 'cache')).mode & 0o777).toString(8)).toBe('700');
    } finally {
      fs.rmSync(home, { recursive: true, force: true });
    }
  });

  it("the running agent's home: no folder or file another account can read", () => {
    const open = modesUnder(rig.home).filter((m) => (m.mode & 0o077) !== 0);
    expect(open.map((m) => `${path.relative(rig.home, m.p)} ${m.mode.toString(8)}`)).toEqual([]);
  });
});

describe('Low: alerts are redacted as the log is', () => {
  it('a provider key the hub echoes in a notice reaches no fleet-token holder', async () => {
    const { token } = new FleetTokens(rig.home).create('redaction-check');
    await rig.hub.sendRaw(
      JSON.stringify({ type: 'notice', payload: { event: 'payout_pending', severity: 'critical', message: `your key ${PROVIDER_KEY} is on file` } }),
    );
    const read = async () => {
      const res = await fetch(`http://127.0.0.1:${rig.consolePort}/api/fleet/v1/summary`, { headers: { authorization: `Bearer ${token}` } });
      return res.text();
    };
    let text = '';
    await until(async () => (text = await read()).includes('is on file'), "the notice's alert in the fleet summary", 15_000);
    expect(text).not.toContain(PROVIDER_KEY);
  });
});
