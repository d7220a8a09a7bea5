// A new one-time console link without a terminal: `swan-provider link` asks the agent running in the same home
// (its stdin is not a TTY here, as under systemd) and prints a link that opens a session once; SIGUSR2 prints
// one on the agent's own output; the first link comes after the start-up lines; with no agent, a plain answer.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agentInHome, askForLink, askSelfCheck } from '../../src/cli/console-link';
import { serveHomeQuestions } from '../../src/core/config/home-questions';
import { CliProcess, offlineHome, runCli } from '../support/cli/cli';
import { until } from '../support/stack';

const roots: string[] = [];
function tempRoot(): string {
  const r = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-link-'));
  roots.push(r);
  return r;
}
afterEach(() => {
  for (const r of roots.splice(0)) fs.rmSync(r, { recursive: true, force: true });
});

describe('link requests', () => {
  it('answers a request with a fresh link, in a folder only the owner reads', async () => {
    const home = tempRoot();
    let n = 0;
    const printed: string[] = [];
    const stop = serveHomeQuestions(home, { newUrl: () => `http://127.0.0.1:1/?code=c${++n}`, printUrl: (u) => printed.push(u) });
    try {
      expect(await askForLink(home)).toEqual({ ok: true, url: 'http://127.0.0.1:1/?code=c1' });
      expect(await askForLink(home)).toEqual({ ok: true, url: 'http://127.0.0.1:1/?code=c2' });
      expect(printed).toEqual(['http://127.0.0.1:1/?code=c1', 'http://127.0.0.1:1/?code=c2']);
      if (process.platform !== 'win32') expect(fs.statSync(path.join(home, 'console-links')).mode & 0o777).toBe(0o700);
      expect(fs.readdirSync(path.join(home, 'console-links'))).toEqual([]);
    } finally {
      stop();
    }
  });

  it("an agent without a console: a link request is told so at once; a ping and doctor's self-check question are answered", async () => {
    const home = tempRoot();
    const stop = serveHomeQuestions(home, { selfCheck: () => ({ traffic: { hubRequests: 2, connectedSince: 1000, now: 5000 } }) });
    try {
      expect(await askForLink(home, 5000)).toMatchObject({ ok: false, code: 'no_console_agent' });
      expect(await agentInHome(home)).toBe(process.pid);
      expect(await askSelfCheck(home)).toEqual({ pid: process.pid, checks: { traffic: { hubRequests: 2, connectedSince: 1000, now: 5000 } } });
      expect(fs.readdirSync(path.join(home, 'console-links'))).toEqual([]);
    } finally {
      stop();
    }
    // Nobody answers now: no self-check (doctor says unknown).
    expect(await askSelfCheck(home, 200)).toBeUndefined();
  });

  it('says so when no agent with a console runs in the home', async () => {
    const home = tempRoot();
    expect(await askForLink(home, 200)).toMatchObject({ ok: false, code: 'no_console_agent' });
    fs.mkdirSync(path.join(home, 'console-links'));
    expect(await askForLink(home, 200)).toMatchObject({ ok: false, code: 'no_answer' });
  });
});

describe.skipIf(process.platform === 'win32')('swan-provider link against a running agent without a terminal', () => {
  it('prints the first link last, another on `link` and on SIGUSR2, each opening one session', async () => {
    const home = offlineHome(path.join(tempRoot(), 'home'));
    const agent = CliProcess.start(['run', '--home', home, '--init-if-missing', '--no-discovery', '--console', '127.0.0.1:0']);
    try {
      const [first] = await agent.line(/console: (http:\/\/127\.0\.0\.1:\d+\/\?code=\S+)/, 'the first link', 60_000);
      // Printed after "agent running", so start-up lines do not scroll it away.
      expect(agent.out.indexOf('agent running')).toBeLessThan(agent.out.indexOf(first));
      // The hint follows the link, perhaps in a later chunk of the agent's output.
      await agent.line(/swan-provider link --home/, 'the hint after the link', 10_000);
      const r = await runCli(['link', '--home', home]);
      expect(r.code).toBe(0);
      const url = /console: (\S+)/.exec(r.stdout)![1]!;
      expect(url).not.toBe(first.replace(/^console: /, ''));
      // A working one-time link: its first use signs in (a redirect with a session cookie), a second does not.
      const once = await fetch(url, { redirect: 'manual' });
      expect(once.headers.get('set-cookie')).toBeTruthy();
      const twice = await fetch(url, { redirect: 'manual' });
      expect(twice.headers.get('set-cookie')).toBeFalsy();
      const before = agent.out.split('console: ').length;
      agent.child.kill('SIGUSR2');
      await until(() => agent.out.split('console: ').length > before, 'a link on SIGUSR2');
    } finally {
      await agent.stop();
    }
  }, 120_000);
});
