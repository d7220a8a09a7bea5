// No request from anywhere can stop the agent: the real CLI (`swan-provider run` with the console and
// the gateway on, and `swan-provider dev-hub`) as child processes, attacked with raw TCP requests —
// malformed request targets, hostile Host headers and WebSocket upgrades — at every server. After each
// attack the server must have answered with an HTTP error, and at the end every server still serves.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEngine, type TestEngine } from '../../support/engine-server';
import { repoRoot } from '../../support/traces';
import { TEST_KEY, freePort, tempHome, until } from '../../support/stack';

const BIN = path.join(repoRoot, 'bin', 'swan-provider.js');

interface Proc {
  child: ChildProcess;
  out: string;
  exited: Promise<number | null>;
}

function startCli(args: string[]): Proc {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const p: Proc = { child, out: '', exited: new Promise((resolve) => child.once('exit', (code) => resolve(code))) };
  child.stdout!.on('data', (d: Buffer) => (p.out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (p.out += d.toString()));
  return p;
}

/** Sends raw bytes; resolves with what came back before the server closed (or 3 s passed). */
function raw(port: number, bytes: string): Promise<string> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    let got = '';
    const done = () => {
      clearTimeout(timer);
      s.destroy();
      resolve(got);
    };
    const timer = setTimeout(done, 3000);
    s.on('data', (d: Buffer) => {
      got += d.toString('latin1');
      if (/\r\n\r\n/.test(got)) done();
    });
    s.on('error', done);
    s.on('close', done);
    s.write(bytes);
  });
}

const UPGRADE = 'Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n';

function attacks(port: number, wsPath: string): Array<[string, string]> {
  const host = `127.0.0.1:${port}`;
  const targets = ['//a:b', '//a:b/bridge', 'http://x', 'http://x:y/', '*', '/%zz', `/${'a'.repeat(20_000)}`, '\\\\a:b'];
  const hosts = [`127.0.0.1:${port}.evil`, '', '%%%[::garbage', '[::1', ':::', 'a'.repeat(5000)];
  const list: Array<[string, string]> = [];
  for (const t of targets) {
    list.push([`GET ${t}`, `GET ${t} HTTP/1.1\r\nHost: ${host}\r\n\r\n`]);
    list.push([`upgrade ${t}`, `GET ${t} HTTP/1.1\r\nHost: ${host}\r\n${UPGRADE}\r\n`]);
  }
  for (const h of hosts) {
    list.push([`GET / Host ${h.slice(0, 30)}`, `GET / HTTP/1.1\r\nHost: ${h}\r\n\r\n`]);
    list.push([`upgrade ${wsPath} Host ${h.slice(0, 30)}`, `GET ${wsPath} HTTP/1.1\r\nHost: ${h}\r\n${UPGRADE}\r\n`]);
  }
  list.push(['upgrade without Host', `GET ${wsPath} HTTP/1.1\r\n${UPGRADE}\r\n`]);
  list.push(['OPTIONS *', `OPTIONS * HTTP/1.1\r\nHost: ${host}\r\n\r\n`]);
  list.push(['CONNECT', `CONNECT a:b HTTP/1.1\r\nHost: a:b\r\n\r\n`]);
  return list;
}

let engine: TestEngine;
let hubProc: Proc;
let agent: Proc;
let home: string;
let consolePort: number;
let gatewayPort: number;
let hubPort: number;

beforeAll(async () => {
  engine = await startTestEngine();
  hubPort = await freePort();
  hubProc = startCli(['dev-hub', '--port', String(hubPort), '--token', TEST_KEY]);
  await until(() => /dev hub listening/.test(hubProc.out), 'dev hub started', 20_000);
  home = tempHome();
  consolePort = await freePort();
  gatewayPort = await freePort();
  const model = engine.modelIds[0]!;
  fs.writeFileSync(path.join(home, 'models.json'), JSON.stringify({ [model]: { endpoint: `${engine.url}/v1` } }));
  fs.writeFileSync(
    path.join(home, 'config.toml'),
    [
      '[API]',
      'NodeName = "hostile-node"',
      '[Inference]',
      `WebSocketURL = "ws://127.0.0.1:${hubPort}"`,
      `ServiceURL = "http://127.0.0.1:${hubPort}"`,
      `ApiKey = "${TEST_KEY}"`,
      '[Agent]',
      'Discovery = false',
      '[Gateway]',
      'Enable = true',
      `Listen = "127.0.0.1:${gatewayPort}"`,
      '',
    ].join('\n'),
  );
  agent = startCli(['run', '--home', home, '--no-discovery', '--console', `127.0.0.1:${consolePort}`]);
  await until(() => /console: http/.test(agent.out) && /local gateway listening/.test(agent.out), 'agent started', 30_000);
}, 60_000);

afterAll(async () => {
  for (const p of [agent, hubProc]) {
    if (p && p.child.exitCode === null) p.child.kill('SIGKILL');
    await p?.exited;
  }
  await engine?.close();
  if (home) fs.rmSync(home, { recursive: true, force: true });
});

function expectAlive(p: Proc, what: string): void {
  expect(p.child.exitCode, `${what} exited:\n${p.out.slice(-3000)}`).toBeNull();
  expect(p.out).not.toMatch(/TypeError|Uncaught|ERR_INVALID_URL/);
}

async function stillServes(port: number, pathName: string): Promise<number> {
  const r = await raw(port, `GET ${pathName} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`);
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(r)?.[1] ?? 0);
}

describe('hostile requests against every server of a running agent', () => {
  for (const [server, portOf, wsPath, check, expected] of [
    ['console', () => consolePort, '/bridge', '/', 401],
    ['gateway', () => gatewayPort, '/v1/ws', '/v1/models', 401],
    ['dev hub', () => hubPort, '/ws', '/v1/models', 200],
  ] as const) {
    it(`${server}: every malformed target, Host and upgrade gets an HTTP error and the process keeps serving`, async () => {
      const port = portOf();
      for (const [name, bytes] of attacks(port, wsPath)) {
        const answer = await raw(port, bytes);
        // The dev hub is a development tool without a Host check: an upgrade may succeed there.
        expect(answer, `${server}: ${name}`).toMatch(server === 'dev hub' ? /^HTTP\/1\.[01] (101|[45]\d\d)/ : /^HTTP\/1\.[01] [45]\d\d/);
        expectAlive(server === 'dev hub' ? hubProc : agent, `${server} after ${name}`);
      }
      expect(await stillServes(port, check)).toBe(expected);
      expectAlive(agent, 'agent');
      expectAlive(hubProc, 'dev hub');
    }, 90_000);
  }

  it('the agent is still registered with the hub and its console still answers the owner', async () => {
    const providers = await (await fetch(`http://127.0.0.1:${hubPort}/dev/providers`)).json();
    expect(providers).toEqual([expect.objectContaining({ connected: true })]);
    const url = /console: (\S+)/.exec(agent.out)![1]!;
    const page = await fetch(url, { redirect: 'manual' });
    expect(page.status).toBe(302);
  });
});
