// `swan-provider service install`: refuses a home an agent already runs in (it answers on the home's
// console-links/ folder, as a running `swan-provider run --console` does), and says whether the unit starts at
// boot: lingering on, turned on, or the `loginctl enable-linger` line to run.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { serveHomeQuestions } from '../../src/core/config/home-questions';
import { serviceInstallCommand, type Linger } from '../../src/cli/service';

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) fs.rmSync(r, { recursive: true, force: true });
});

function setup(): { home: string; env: NodeJS.ProcessEnv } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-service-'));
  roots.push(root);
  const home = path.join(root, 'home');
  fs.mkdirSync(home);
  fs.writeFileSync(path.join(home, 'config.toml'), '[Inference]\nEnable = true\n');
  return { home, env: { XDG_CONFIG_HOME: path.join(root, 'xdg') } };
}

function linger(initial: 'yes' | 'no' | undefined, enableWorks: boolean): Linger & { enabled: number } {
  let state = initial;
  const l = {
    enabled: 0,
    state: () => state,
    enable: () => {
      l.enabled++;
      if (enableWorks) state = 'yes';
      return enableWorks;
    },
  };
  return l;
}

async function install(home: string, env: NodeJS.ProcessEnv, l: Linger, agentInHome?: (h: string) => Promise<number | undefined>) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const code = await serviceInstallCommand(
    { home, console: '127.0.0.1:7777' },
    { env, linger: l, stdout, stderr, platform: 'linux', ...(agentInHome ? { agentInHome } : {}) },
  );
  return { code, out: stdout.read()?.toString() ?? '', err: stderr.read()?.toString() ?? '' };
}

describe('service install', () => {
  it('refuses a home an agent already runs in', async () => {
    const { home, env } = setup();
    const stop = serveHomeQuestions(home, { newUrl: () => 'http://127.0.0.1:1/?code=x' });
    try {
      const r = await install(home, env, linger('yes', true));
      expect(r.code).toBe(1);
      expect(r.err).toContain(`pid ${process.pid}`);
      expect(fs.existsSync(path.join(env.XDG_CONFIG_HOME!, 'systemd', 'user', 'swan-provider.service'))).toBe(false);
    } finally {
      stop();
    }
  });

  it('writes the unit and turns lingering on when it can', async () => {
    const { home, env } = setup();
    const l = linger('no', true);
    const r = await install(home, env, l, async () => undefined);
    expect(r.code).toBe(0);
    expect(fs.existsSync(path.join(env.XDG_CONFIG_HOME!, 'systemd', 'user', 'swan-provider.service'))).toBe(true);
    expect(l.enabled).toBe(1);
    expect(r.out).toContain('Turned lingering on');
  });

  it('says how to turn lingering on when it cannot, and leaves it alone when it is on', async () => {
    const { home, env } = setup();
    const off = await install(home, env, linger('no', false), async () => undefined);
    expect(off.code).toBe(0);
    expect(off.out).toContain(`sudo loginctl enable-linger ${os.userInfo().username}`);
    const on = linger('yes', true);
    expect((await install(home, env, on, async () => undefined)).out).toContain('Lingering is on');
    expect(on.enabled).toBe(0);
  });
});
