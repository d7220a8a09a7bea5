// Control characters from outside never reach the owner's terminal: the helper itself, and every
// terminal writer that prints outside text — log lines, `engines`, `usage`, `doctor`.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { enginesCommand } from '../../../src/cli/engines-command';
import { ledgerPath, usageCommand } from '../../../src/cli/usage-command';
import { Ledger } from '../../../src/core/ledger/ledger';
import { AgentLog } from '../../../src/core/base/log';
import { forTerminal, forTerminalLine } from '../../../src/core/base/terminal';
import { startTestEngine, type TestEngine } from '../../support/engine-server';
import { repoRoot } from '../../support/traces';
import { tempHome } from '../../support/stack';
import { rec } from '../../support/ledger/helpers';
import { writeConfigToml } from '../../support/config-toml';

const NASTY = [
  '\x1b]0;pwned\x07', // OSC: window title
  '\x1b[2J\x1b[H', // clear screen, cursor home
  '\x1b[31mred\x1b[0m',
  '\x1bP1$qm\x1b\\', // DCS
  '\x9b2J', // C1 CSI
  '\r\x08\x07\x00\x7f',
  '\u202e', // right-to-left override
];
const ANY_CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const c of cleanups.splice(0).reverse()) await c();
});

function capture(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  let buf = '';
  stream.on('data', (c: Buffer) => (buf += c.toString('utf8')));
  return { stream, text: () => buf };
}

describe('forTerminal', () => {
  it('removes escape sequences and control characters, keeps text, newlines and tabs', () => {
    for (const n of NASTY) expect(forTerminal(`a${n}b`), JSON.stringify(n)).not.toMatch(ANY_CONTROL);
    expect(forTerminal('a\x1b]0;pwned\x07b')).toBe('ab');
    expect(forTerminal('\x1b[31mred\x1b[0m')).toBe('red');
    expect(forTerminal('line one\n\tline two — ünïcødé ✓')).toBe('line one\n\tline two — ünïcødé ✓');
  });
});

describe('terminal writers', () => {
  it('log lines on the terminal', () => {
    const written: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((s: string | Uint8Array) => {
      written.push(String(s));
      return true;
    });
    const log = new AgentLog({ console: 'info' });
    log.child('hub').warn(`the hub said: ${NASTY.join('')} done`);
    expect(written.join('')).toContain('the hub said:');
    expect(written.join('')).not.toMatch(ANY_CONTROL);
  });

  it('`engines`: an engine version and model id with escapes', async () => {
    const e: TestEngine = await startTestEngine({ engineType: 'vllm', version: `0.11\x1b]0;pwned\x07`, models: [`evil\x1b[2Jmodel`] });
    cleanups.push(() => e.close());
    for (const json of [false, true]) {
      const out = capture();
      await enginesCommand({ json, hosts: [], probeUrls: [e.url], stdout: out.stream });
      expect(out.text()).toContain('evil');
      expect(out.text()).not.toMatch(ANY_CONTROL);
    }
  });

  it('`usage`: a model id with escapes in the ledger', async () => {
    const home = tempHome();
    cleanups.push(() => fs.rmSync(home, { recursive: true, force: true }));
    const l = Ledger.open(ledgerPath(home));
    l.setPrice('*', 1, 2, 0);
    l.record(rec(Date.now(), { model: `m\x1b]0;pwned\x07\x1b[2J` }));
    l.close();
    const out = capture();
    const err = capture();
    expect(await usageCommand({ home, action: 'summary', stdout: out.stream, stderr: err.stream })).toBe(0);
    expect(out.text()).toMatch(/^m/m);
    expect(out.text() + err.text()).not.toMatch(ANY_CONTROL);
  });

  it('`doctor`: a key-check answer with escapes from the service URL', async () => {
    const service = http.createServer((_req, res) => {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 'unauthorized', can_connect: false, api_key_valid: false, message: 'nope\x1b]0;pwned\x07\x1b[2J' }));
    });
    await new Promise<void>((r) => service.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise<void>((r) => service.close(() => r())));
    const port = (service.address() as AddressInfo).port;
    const home = tempHome();
    cleanups.push(() => fs.rmSync(home, { recursive: true, force: true }));
    fs.writeFileSync(path.join(home, 'models.json'), '{}');
    writeConfigToml(home, {
      API: { NodeName: 'n' },
      Inference: { WebSocketURL: 'ws://127.0.0.1:9', ServiceURL: `http://127.0.0.1:${port}`, ApiKey: 'sk-prov-0123456789' },
    });
    const out = await new Promise<string>((resolve) => {
      const child = spawn(process.execPath, [path.join(repoRoot, 'bin', 'swan-provider.js'), 'doctor', '--home', home], { stdio: ['ignore', 'pipe', 'pipe'] });
      let text = '';
      child.stdout.on('data', (d: Buffer) => (text += d.toString()));
      child.on('close', () => resolve(text));
    });
    expect(out).toContain('provider status at');
    expect(out).not.toMatch(ANY_CONTROL);
  });
});

describe('forTerminalLine', () => {
  it('shows line breaks from outside instead of printing them: one entry stays one line', () => {
    for (const br of ['\n', '\r\n', '\r', '\u2028', '\u2029', '\u0085']) {
      const out = forTerminalLine(`hub said: ok${br}console: http://127.0.0.1:1/?code=FORGED`);
      expect(out.split(/\r?\n/)).toHaveLength(1);
      expect(out).toContain('console: http://127.0.0.1:1/?code=FORGED');
    }
    expect(forTerminalLine('a\tb\x1b[2Jc')).toBe('a bc');
  });
});
