// `swan-provider run`: the headless agent, optionally with the browser console.
import fs from 'node:fs';
import path from 'node:path';
import { Agent } from '../core/agent';
import { ConfigError } from '../core/config/config';
import { startConsoleServer, type ConsoleServer } from '../core/console/server';
import { renderMetrics } from '../core/console/prometheus';
import { ensureConfig } from '../core/config/first-run';
import { ensureHome } from '../core/config/home';
import { Log } from '../core/log';
import { parseHostPort, rendererDir } from './home';

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
  /** Extra Host names the console answers to when bound to every interface (the Host check still applies). */
  consoleAllowHost?: string[];
}

export function noConfigHelp(configPath: string, home: string): string {
  return [
    `No config file at ${configPath}.`,
    'To get one:',
    `  swan-provider init --dir "${home}"     # writes config.toml and models.json, filled with what it detects`,
    '  then put your provider key in ApiKey (or set INFERENCE_API_KEY), and run again.',
    'Or point at an existing computing-provider config:  swan-provider run --config /path/to/config.toml',
  ].join('\n');
}

/** Starts the agent (and console); resolves with the exit code once SIGINT/SIGTERM stops it. */
export async function runCommand(o: RunOptions): Promise<number> {
  ensureHome(o.home);
  const log = new Log({ file: path.join(o.home, 'logs', 'agent.jsonl'), console: o.quiet ? 'warn' : 'info' });
  const configPath = path.resolve(o.config ?? (o.initIfMissing ? ensureConfig(o.home, log.child('agent')) : path.join(o.home, 'config.toml')));
  if (!fs.existsSync(configPath)) {
    process.stderr.write(`${noConfigHelp(configPath, o.home)}\n`);
    return 2;
  }
  let agent: Agent;
  try {
    agent = await Agent.create({ home: o.home, configPath, log, mode: 'headless', ...(o.discovery === false ? { discovery: false } : {}) });
  } catch (e) {
    process.stderr.write(`${e instanceof ConfigError ? `Config error: ${e.message}` : (e as Error).message}\n`);
    return 2;
  }
  await agent.start();
  let consoleServer: ConsoleServer | undefined;
  let onEnter: (() => void) | undefined;
  if (o.console) {
    const { host, port } = parseHostPort(o.console, '--console');
    if (!fs.existsSync(path.join(rendererDir, 'index.html'))) {
      log.child('console').warn(`the console UI is not built (${rendererDir} is missing): run "npm run build:renderer" first`);
    }
    consoleServer = await startConsoleServer({
      backend: agent,
      host,
      port,
      staticDir: rendererDir,
      log: log.child('console'),
      ...(o.consoleAllowHost?.length ? { allowedHostNames: o.consoleAllowHost } : {}),
      ...(o.metrics ? { metrics: () => renderMetrics(agent.snapshot(), agent.sampler?.latest() ?? null) } : {}),
    });
    // The link goes to stdout only, never to the JSON log; it holds a one-time code, not the token
    // (docs/security.md): after one use, or CODE_TTL_MS, the line in a scrollback or journal opens nothing.
    const con = consoleServer;
    process.stdout.write(`console: ${con.url}\n`);
    process.stdout.write(`  (a one-time link: it opens one browser session${process.stdin.isTTY ? '; press Enter here for another' : ''})\n`);
    if (process.stdin.isTTY) {
      onEnter = () => process.stdout.write(`console: ${con.newUrl()}\n`);
      process.stdin.on('data', onEnter);
    }
    if (o.metrics) {
      // The token itself is shown on a terminal only (a service's stdout is its journal).
      const token = process.stdout.isTTY ? con.token : '<the console token; shown on a terminal only>';
      process.stdout.write(`metrics: http://${host}:${con.port}/metrics (send "Authorization: Bearer ${token}")\n`);
    }
  }
  process.stdout.write(`agent running (node ${agent.identity.nodeId.slice(0, 16)}…); press Ctrl+C to stop\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  process.stdout.write('stopping…\n');
  if (onEnter) {
    process.stdin.off('data', onEnter);
    process.stdin.pause();
  }
  await consoleServer?.close();
  await agent.stop();
  return 0;
}
