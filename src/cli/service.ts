// `swan-provider service install|status`: a systemd user unit so the agent starts with the session
// (Linux). The unit serves the console on a fixed address with its token kept in a 0600 file in the
// home folder, so the console URL (and a bookmark of it) stays the same across restarts.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { packageRoot, parseHostPort } from './home';
import { loadOrCreateToken } from './token-file';
import { agentInHome } from './console-link';
import { HOME_FILES, homePath } from '../core/config/home-layout';

export const UNIT_NAME = 'swan-provider.service';
export const TOKEN_FILE_NAME = HOME_FILES.consoleToken;

/**
 * Node flags the service starts the agent with. Under a steady stream load V8 doubles the young generation
 * to its 32 MB maximum (everything a streaming request holds survives a scavenge or two) and lets old space
 * reach about twice the live heap between full GCs; with 2 MB semi-spaces and old space grown by at most
 * 25 % the agent holds about 30 MB less under load at the same latency and CPU a chunk (docs/performance.md).
 * V8 reads both only when it makes the heap, so they go on the command line.
 */
export const AGENT_NODE_FLAGS = ['--max-semi-space-size=2', '--heap-growing-percent=25'] as const;

export function unitPath(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(env.XDG_CONFIG_HOME ?? path.join(os.homedir(), '.config'), 'systemd', 'user', UNIT_NAME);
}

export function systemdUnit(o: { home: string; config?: string; console: string; tokenFile: string; node: string; bin: string }): string {
  const args = [
    'run',
    '--home',
    JSON.stringify(o.home),
    ...(o.config ? ['--config', JSON.stringify(path.resolve(o.config))] : []),
    '--console',
    o.console,
    '--console-token-file',
    JSON.stringify(o.tokenFile),
  ];
  return `[Unit]
Description=Swan Provider Console agent (serves this machine's GPU on Swan Inference)
After=network-online.target
Wants=network-online.target

[Service]
ExecStart=${o.node} ${AGENT_NODE_FLAGS.join(' ')} ${o.bin} ${args.join(' ')}
Restart=on-failure
RestartSec=5
# Exit 2 is a start the agent refused with one line (a bad config.toml, another agent on this home, a home it
# cannot write): restarting would only repeat it every 5 s. The agent stops within 8 s in every state.
RestartPreventExitStatus=2
TimeoutStopSec=20

[Install]
WantedBy=default.target
`;
}

/** The console address and token file written in a unit by `service install`. */
export function readUnit(text: string): { console?: string; tokenFile?: string; home?: string } {
  const exec = /^ExecStart=(.*)$/m.exec(text)?.[1] ?? '';
  const arg = (flag: string) => {
    const m = new RegExp(`${flag} ("(?:[^"\\\\]|\\\\.)*"|\\S+)`).exec(exec);
    if (!m) return undefined;
    const v = m[1]!;
    return v.startsWith('"') ? (JSON.parse(v) as string) : v;
  };
  return { console: arg('--console'), tokenFile: arg('--console-token-file'), home: arg('--home') };
}

function consoleUrl(at: string, token: string): string {
  const { host, port } = parseHostPort(at, '--console');
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return `http://${shown}:${port}/?token=${token}`;
}

/** Lingering: without it a user's units start when they log in, never at boot (a headless rig nobody logs into). */
export interface Linger {
  /** 'yes' | 'no', or undefined when loginctl cannot say. */
  state(): 'yes' | 'no' | undefined;
  /** Tries `loginctl enable-linger` for this user (allowed without root on many systems); true when it worked. */
  enable(): boolean;
}

const user = (): string => os.userInfo().username;

export const systemLinger: Linger = {
  state: () => {
    try {
      const out = execFileSync('loginctl', ['show-user', user(), '--property=Linger'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
        timeout: 5000,
      });
      const v = /Linger=(yes|no)/.exec(out)?.[1];
      return v === 'yes' || v === 'no' ? v : undefined;
    } catch {
      return undefined;
    }
  },
  enable: () => {
    try {
      execFileSync('loginctl', ['enable-linger', user()], { stdio: 'ignore', timeout: 10_000 });
      return true;
    } catch {
      return false;
    }
  },
};

/** What install says about lingering, after trying to turn it on. */
export function lingerAdvice(l: Linger): string {
  if (l.state() === 'yes') return 'Lingering is on: the service starts at boot, before anyone logs in.\n';
  if (l.enable() && l.state() === 'yes') return 'Turned lingering on (loginctl enable-linger): the service starts at boot, before anyone logs in.\n';
  return (
    'Lingering is off, so the service starts only when you log in, never at boot on a rig nobody logs into. Turn it on with:\n' +
    `  sudo loginctl enable-linger ${user()}\n`
  );
}

export interface ServiceInstallDeps {
  /** The pid of an agent with a console already running in the home (src/cli/console-link.ts). */
  agentInHome?: (home: string) => Promise<number | undefined>;
  linger?: Linger;
  env?: NodeJS.ProcessEnv;
  stdout?: NodeJS.WritableStream;
  stderr?: NodeJS.WritableStream;
  platform?: NodeJS.Platform;
}

export async function serviceInstallCommand(o: { home: string; config?: string; console: string }, d: ServiceInstallDeps = {}): Promise<number> {
  const stdout = d.stdout ?? process.stdout;
  const stderr = d.stderr ?? process.stderr;
  if ((d.platform ?? process.platform) !== 'linux') {
    stderr.write('service install writes a systemd user unit and works on Linux only. On Windows and macOS, use "Start at login" in the desktop app.\n');
    return 1;
  }
  const home = path.resolve(o.home);
  const config = o.config ? path.resolve(o.config) : homePath(home, 'config');
  if (!fs.existsSync(config)) {
    stderr.write(
      `No config at ${config}: the service would have nothing to run. Make one first:\n` +
        `  swan-provider init --home "${home}"     (then paste your provider key in the console, or put it in ApiKey)\n` +
        `or run "npm start -- --home ${home}" once and finish the console's onboarding.\n`,
    );
    return 2;
  }
  try {
    parseHostPort(o.console, '--console');
  } catch (e) {
    stderr.write(`${(e as Error).message}\n`);
    return 2;
  }
  // Two agents on one home would share its identity, ledger and console port: refuse while one runs here.
  const running = await (d.agentInHome ?? ((h) => agentInHome(h)))(home);
  if (running !== undefined) {
    stderr.write(
      `An agent already runs in ${home} (pid ${running}). A service on the same home would run a second one beside it.\n` +
        'Stop that agent first (Ctrl+C in its terminal, or quit the desktop app), then install the service again.\n',
    );
    return 1;
  }
  const tokenFile = path.join(home, TOKEN_FILE_NAME);
  const token = loadOrCreateToken(tokenFile);
  const file = unitPath(d.env);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(
    file,
    systemdUnit({
      home,
      ...(o.config ? { config } : {}),
      console: o.console,
      tokenFile,
      node: process.execPath,
      bin: path.join(packageRoot, 'bin', 'swan-provider.js'),
    }),
  );
  stdout.write(
    `Wrote ${file}\nEnable it with:\n  systemctl --user daemon-reload && systemctl --user enable --now swan-provider\n` +
      `The console will be at (bookmark it; the token is kept in ${tokenFile}):\n  ${consoleUrl(o.console, token)}\n` +
      'Print it again with:  swan-provider service status\n',
  );
  stdout.write(lingerAdvice(d.linger ?? systemLinger));
  return 0;
}

function systemctlState(): string | undefined {
  try {
    return execFileSync('systemctl', ['--user', 'is-active', 'swan-provider'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 5000 }).trim();
  } catch (e) {
    const out = (e as { stdout?: string }).stdout?.trim();
    return out || undefined;
  }
}

/** Exit 0 when the unit is installed (whatever systemd says about it), 1 when it is not. */
export async function serviceStatusCommand(_o: { home: string }): Promise<number> {
  const file = unitPath();
  if (!fs.existsSync(file)) {
    process.stdout.write(`No service installed (${file} does not exist). Install it with:  swan-provider service install\n`);
    return 1;
  }
  const unit = readUnit(fs.readFileSync(file, 'utf8'));
  const state = systemctlState();
  process.stdout.write(`unit: ${file}\nstate: ${state ?? 'unknown (systemctl is not available here)'}\n`);
  if (unit.home) process.stdout.write(`home: ${unit.home}\n`);
  if (unit.console && unit.tokenFile && fs.existsSync(unit.tokenFile)) {
    process.stdout.write(`console: ${consoleUrl(unit.console, loadOrCreateToken(unit.tokenFile))}\n`);
  } else if (unit.console) {
    process.stdout.write(`console: ${unit.console} (no token file; reinstall with "swan-provider service install" to get a stable URL)\n`);
  } else {
    process.stdout.write('console: not served by this unit (reinstall with "swan-provider service install")\n');
  }
  return 0;
}
