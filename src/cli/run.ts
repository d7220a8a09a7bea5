// `swan-provider run`: the headless agent, optionally with the browser console.
import { printLinkOnSignal } from './console-link';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Agent } from '../core/agent';
import { SettingsFile } from '../core/config/settings-file';
import { ConfigError, loadConfig } from '../core/config/config';
import { parseListen } from '../core/gateway/options';
import { startConsoleServer, type ConsoleServer } from '../core/console/server';
import { fleetApiRoute } from '../core/console/fleet-api';
import { ensureConfig } from '../core/config/first-run';
import { ensureHome } from '../core/config/home';
import { AgentLog } from '../core/base/log';
import { installProcessGuard } from '../core/base/process-guard';
import { ensureConsoleUi } from './console-ui';
import { parseHostPort, rendererDir } from './home';
import { consoleFix, firstListenProblem, type ListenTarget } from './port-check';
import { loadOrCreateToken } from './token-file';
import { attachApprovalTerminal } from './approval-terminal';
import { homePath } from '../core/config/home-layout';
import { HomeLockError, homeWriteError, lockHome, type HomeLock } from '../core/config/home-lock';

/**
 * A stop that has not finished by then ends the process anyway: inside systemd's default stop timeout
 * (90 s) and launchd's (20 s), so the service manager never has to SIGKILL what is still writing. The ledger's
 * held rows are written on the way (space kept in reserve frees room on a full disk), and the log's flush
 * has its own, shorter deadline.
 */
export const STOP_DEADLINE_MS = 8_000;

export interface RunOptions {
  home: string;
  config?: string;
  console?: string;
  discovery?: boolean;
  quiet?: boolean;
  /** Write a default config in the home folder when there is none (first run of `npm start`). */
  initIfMissing?: boolean;
  /** Also serve /metrics (Prometheus text) on the console's address; it needs the console token. */
  metrics?: boolean;
  /** Keep the console token in this file (0600, created when missing) so the console URL stays the same. */
  consoleTokenFile?: string;
  /** Extra Host names the console answers to when bound to every interface (the Host check still applies). */
  consoleAllowHost?: string[];
}

export function noConfigHelp(configPath: string, home: string): string {
  return [
    `No config file at ${configPath}.`,
    'To get one:',
    `  swan-provider init --home "${home}"     # writes config.toml and models.json, filled with what it detects`,
    '  then put your provider key in ApiKey (or set INFERENCE_API_KEY), and run again.',
    'Or point at an existing computing-provider config:  swan-provider run --config /path/to/config.toml',
  ].join('\n');
}

/** Starts the agent (and console); resolves with the exit code once SIGINT/SIGTERM stops it. */
/**
 * What must be free before the agent starts: the console (which also serves /metrics) and the local
 * gateway when it is on (config.toml's [Gateway], overlaid by the console's settings, as the agent reads it).
 */
function consoleTarget(o: RunOptions, consoleAt: { host: string; port: number } | undefined): ListenTarget[] {
  return consoleAt ? [{ what: o.metrics ? 'console (and /metrics)' : 'console', ...consoleAt, fix: consoleFix(consoleAt.host) }] : [];
}

function gatewayTarget(o: RunOptions, configPath: string): ListenTarget[] {
  const targets: ListenTarget[] = [];
  try {
    const cfg = loadConfig(configPath);
    const s = SettingsFile.in(o.home).get();
    if (s.gatewayEnabled ?? cfg.gateway.enable) {
      const listen = s.gatewayListen ?? cfg.gateway.listen;
      const at = parseListen(listen);
      const where = s.gatewayListen !== undefined ? "the gateway address in the console's Settings" : `[Gateway] Listen in ${configPath}`;
      targets.push({ what: 'local gateway', ...at, fix: (next) => `Change ${where} (for example ${at.host}:${next}).` });
    }
  } catch {
    // A bad config is reported by Agent.create with its file and line.
  }
  return targets;
}

/** Starts the agent (and console); resolves with the exit code once SIGINT/SIGTERM stops it. */
export async function runCommand(o: RunOptions): Promise<number> {
  let consoleAt: { host: string; port: number } | undefined;
  try {
    if (o.console) consoleAt = parseHostPort(o.console, '--console');
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n`);
    return 2;
  }
  // The home first: a second agent on it is refused naming it (and the first one's console), and a home
  // that cannot be written says so in one line, before anything is opened there.
  let lock: HomeLock;
  let log: AgentLog;
  try {
    try {
      ensureHome(o.home);
    } catch (e) {
      throw homeWriteError(o.home, e);
    }
    lock = await lockHome(o.home, {
      onCompromised: (err) =>
        log
          .child('agent')
          .warn(
            `The lock of the home ${o.home} was lost (${err.message}); it is taken back as soon as the disk allows, and until then another agent started on this home would not be refused.`,
            {
              code: 'home_lock_lost',
            },
          ),
      onRegained: () => log.child('agent').info(`The lock of the home ${o.home} is held again.`, { code: 'home_lock_regained' }),
      onTakenOver: (h) =>
        log
          .child('agent')
          .warn(
            `Another agent (pid ${h.pid}${h.host !== os.hostname() ? ` on ${h.host}` : ''}) has the home ${o.home} since this one lost its lock: stop one of them, they share its node and ledger.`,
            { code: 'home_lock_taken' },
          ),
    });
  } catch (e) {
    process.stderr.write(`${e instanceof HomeLockError ? e.message : (e as Error).message}\n`);
    return 2;
  }
  // The console port next: a busy one stops here, before even a first-run config is written.
  const consoleBusy = await firstListenProblem(consoleTarget(o, consoleAt));
  if (consoleBusy) {
    process.stderr.write(`${consoleBusy}\n`);
    await lock.release();
    return 2;
  }
  try {
    log = new AgentLog({ file: homePath(o.home, 'log'), console: o.quiet ? 'warn' : 'info' });
  } catch (e) {
    process.stderr.write(`${homeWriteError(o.home, e).message}\n`);
    await lock.release();
    return 2;
  }
  const code = await runLocked(o, consoleAt, log, lock);
  await lock.release();
  await log.close();
  return code;
}

async function runLocked(o: RunOptions, consoleAt: { host: string; port: number } | undefined, log: AgentLog, lock: HomeLock): Promise<number> {
  // A failure no boundary caught is logged and the rest keeps serving (base/process-guard.ts).
  const guard = installProcessGuard(log.child('process'));
  const configPath = path.resolve(o.config ?? (o.initIfMissing ? ensureConfig(o.home, log.child('agent')) : homePath(o.home, 'config')));
  if (!fs.existsSync(configPath)) {
    process.stderr.write(`${noConfigHelp(configPath, o.home)}\n`);
    return 2;
  }
  const busy = await firstListenProblem(gatewayTarget(o, configPath));
  if (busy) {
    process.stderr.write(`${busy}\n`);
    return 2;
  }
  let token: string | undefined;
  if (consoleAt) {
    try {
      if (o.consoleTokenFile) token = loadOrCreateToken(o.consoleTokenFile);
    } catch (e) {
      process.stderr.write(`${(e as Error).message}\n`);
      return 2;
    }
    const why = await ensureConsoleUi((line) => process.stdout.write(`${line}\n`));
    if (why) log.child('console').warn(why);
  }
  let agent: Agent;
  try {
    agent = await Agent.create({
      home: o.home,
      configPath,
      log,
      mode: 'headless',
      ...(o.discovery === false ? { discovery: false } : {}),
      ...(o.metrics && consoleAt ? { metrics: true } : {}),
    });
  } catch (e) {
    process.stderr.write(`${e instanceof ConfigError ? `Config error: ${e.message}` : (e as Error).message}\n`);
    return 2;
  }
  let consoleServer: ConsoleServer | undefined;
  if (consoleAt) {
    const { host, port } = consoleAt;
    try {
      consoleServer = await startConsoleServer({
        backend: agent,
        host,
        port,
        staticDir: rendererDir,
        log: log.child('console'),
        ...(token ? { token } : {}),
        ...(o.consoleAllowHost?.length ? { allowedHostNames: o.consoleAllowHost } : {}),
        ...(agent.metrics ? { metrics: () => agent.metrics!.text() } : {}),
        routes: [fleetApiRoute({ source: agent.fleet.api, tokens: agent.fleet.tokens, log: log.child('fleet') })],
      });
    } catch (e) {
      // Taken between the check and now: the same one line, nothing started.
      const line = await firstListenProblem(consoleTarget(o, consoleAt));
      process.stderr.write(`${line ?? `The console could not listen on ${o.console}: ${(e as Error).message}`}\n`);
      await agent.stop();
      return 2;
    }
    if (!fs.existsSync(path.join(rendererDir, 'index.html'))) {
      log.child('console').warn(`the console UI is not built (${rendererDir} is missing): run "npm run build:renderer" first`);
    }
  }
  await agent.start();
  let detachTerminal: (() => void) | undefined;
  let newLink: (() => void) | undefined;
  let stopLinks: (() => void) | undefined;
  if (consoleServer) {
    const con = consoleServer;
    lock.setConsole(`http://${consoleAt!.host.includes(':') ? `[${consoleAt!.host}]` : consoleAt!.host}:${con.port}/`);
    newLink = () => process.stdout.write(`console: ${con.newUrl()}\n`);
    if (o.metrics) {
      // The token itself is shown on a terminal only (a service's stdout is its journal).
      const shown = process.stdout.isTTY ? con.token : '<the console token; shown on a terminal only>';
      process.stdout.write(`metrics: http://${consoleAt!.host}:${con.port}/metrics (send "Authorization: Bearer ${shown}")\n`);
    }
  }
  // Another link on demand without a terminal too: `swan-provider link`, or SIGUSR2; and, console or not, the
  // questions of other commands: whether an agent runs here, `doctor`'s self-check, `update`'s idle wait.
  try {
    const con = consoleServer;
    const print = (url: string): void => void process.stdout.write(`console: ${url}\n`);
    const stopQuestions = agent.answerHomeQuestions(con ? { newUrl: () => con.newUrl(), printUrl: print } : undefined);
    const stopSignal = printLinkOnSignal(con ? () => con.newUrl() : undefined, print);
    stopLinks = () => {
      stopQuestions();
      stopSignal();
    };
  } catch (e) {
    log
      .child('console')
      .warn(`other commands cannot ask this agent (${homePath(o.home, 'consoleLinks')}: ${(e as Error).message}): \`link\` and \`doctor\` will not hear it`);
  }
  // The terminal is also where the owner approves what the console may not do alone (approve CODE).
  if (process.stdin.isTTY) {
    const other = consoleServer ? newLink : undefined;
    detachTerminal = attachApprovalTerminal(agent.approvals, {
      input: process.stdin,
      write: (t) => process.stdout.write(t),
      ...(other ? { other: (line: string) => line.trim() === '' && other() } : {}),
    });
  }
  process.stdout.write(`agent running (node ${agent.identity.nodeId.slice(0, 16)}…); press Ctrl+C to stop\n`);
  if (consoleServer) {
    // Printed last, so the start-up lines do not scroll it away. It goes to stdout only, never to the JSON log;
    // it holds a one-time code, not the token (docs/security.md): after one use, or CODE_TTL_MS, the line in a
    // scrollback or journal opens nothing.
    process.stdout.write(`console: ${consoleServer.url}\n`);
    process.stdout.write(
      `  (a one-time link: it opens one browser session; for another, ${process.stdin.isTTY ? 'press Enter here or ' : ''}run \`swan-provider link --home ${o.home}\`)\n`,
    );
  }
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  process.stdout.write('stopping…\n');
  // A second Ctrl+C, or the deadline, ends it now: a stop must never hang (a full disk once made it).
  const exitNow = (why: string): void => {
    process.stderr.write(`${why}\n`);
    try {
      agent.closeLedgerNow(); // the rows the hub was told of, written before the process goes
    } catch {
      // exiting anyway
    }
    process.exit(1);
  };
  const deadline = setTimeout(() => exitNow(`The agent did not stop within ${STOP_DEADLINE_MS / 1000} s; exiting now.`), STOP_DEADLINE_MS);
  deadline.unref();
  const again = (): void => exitNow('Stopping at once.');
  process.once('SIGINT', again);
  process.once('SIGTERM', again);
  if (detachTerminal) {
    detachTerminal();
    process.stdin.pause();
  }
  stopLinks?.();
  await consoleServer?.close();
  await agent.stop();
  guard.dispose();
  clearTimeout(deadline);
  process.off('SIGINT', again);
  process.off('SIGTERM', again);
  return 0;
}
