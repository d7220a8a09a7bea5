// A new one-time console link on demand, with or without a terminal: `swan-provider link` asks the agent
// running in the same home, through a folder only the owner's account can write (`<home>/console-links/`,
// 0700, as approvals/ is): it drops `request-<nonce>`, the agent answers `answer-<nonce>.json` (0600) with a
// fresh link and prints it on its own output too. SIGUSR2 to the agent prints one as well (POSIX). A link is
// one-time (docs/security.md): whoever reads it later from a journal opens nothing. The same folder carries
// the other questions a command asks the agent of its home, with or without a console: `ping-<nonce>` (is one
// running: its pid), `checks-<nonce>` (`doctor`: its self-check's inputs, bridge/machine-checks.ts) and
// `idle-<nonce>` (`swan-provider update`: answered once no request is in flight, with how many were).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { writeJsonAtomic } from '../core/config/atomic-file';
import { homePath } from '../core/config/home-layout';
import type { MachineChecks } from '../core/bridge/verdict';

const REQUEST = /^(request|ping|checks|idle)-([0-9a-f]{16})$/;
const DIR_MODE = 0o700;

function linksDir(home: string): string {
  return homePath(home, 'consoleLinks');
}

export interface AgentAnswers {
  /** The self-check's inputs as the agent reads them now (`doctor` asks). */
  selfCheck?: () => MachineChecks;
  /** Resolves once no request is in flight, with how many were when asked (`swan-provider update` asks). */
  idle?: () => Promise<number>;
}

/**
 * Answers the questions of other commands while the agent runs; returns the function that stops it.
 * `newUrl` is the console's (absent: the agent runs without one, and a link request is told so).
 */
export function serveLinkRequests(home: string, newUrl: (() => string) | undefined, print: (url: string) => void, answers: AgentAnswers = {}): () => void {
  const dir = linksDir(home);
  fs.mkdirSync(dir, { recursive: true, mode: DIR_MODE });
  fs.chmodSync(dir, DIR_MODE);
  const answer = (name: string): void => {
    const m = REQUEST.exec(name);
    if (!m) return;
    try {
      fs.rmSync(path.join(dir, name));
    } catch {
      return; // answered already (a second event for the same file)
    }
    // A ping (`service install` asking whether an agent runs here) gets the pid and no link.
    if (m[1] === 'ping') return writeJsonAtomic(path.join(dir, `answer-${m[2]}.json`), { pid: process.pid });
    if (m[1] === 'idle') {
      const reply = (heldFor: number | null): void => writeJsonAtomic(path.join(dir, `answer-${m[2]}.json`), { pid: process.pid, idle: true, heldFor });
      if (!answers.idle) return reply(null);
      void answers.idle().then(reply, () => undefined);
      return;
    }
    if (m[1] === 'checks') return writeJsonAtomic(path.join(dir, `answer-${m[2]}.json`), { pid: process.pid, checks: answers.selfCheck?.() ?? null });
    if (!newUrl) return writeJsonAtomic(path.join(dir, `answer-${m[2]}.json`), { error: 'no_console' });
    const url = newUrl();
    writeJsonAtomic(path.join(dir, `answer-${m[2]}.json`), { url });
    print(url);
  };
  // Requests left from before this agent started are stale: their asker gave up.
  for (const n of fs.readdirSync(dir)) fs.rmSync(path.join(dir, n), { force: true });
  const watcher = fs.watch(dir, (_event, name) => {
    if (name) answer(name.toString());
  });
  watcher.on('error', () => undefined);
  const onSignal = (): void => {
    if (newUrl) print(newUrl());
  };
  const signal = newUrl !== undefined && process.platform !== 'win32';
  if (signal) process.on('SIGUSR2', onSignal);
  return () => {
    watcher.close();
    if (signal) process.off('SIGUSR2', onSignal);
  };
}

export type LinkAnswer = { ok: true; url: string } | { ok: false; code: 'no_console_agent' | 'no_answer'; message: string };

/** The pid of an agent running in `home`, when one answers within `timeoutMs`. */
export async function agentInHome(home: string, timeoutMs = 2000): Promise<number | undefined> {
  if (!fs.existsSync(linksDir(home))) return undefined;
  const a = await ask(home, 'ping', timeoutMs);
  return typeof a?.pid === 'number' ? a.pid : undefined;
}

/** Asks the agent running in `home` for a new link; waits up to `timeoutMs` for its answer. */
export async function askForLink(home: string, timeoutMs = 10_000): Promise<LinkAnswer> {
  const none: LinkAnswer = {
    ok: false,
    code: 'no_console_agent',
    message: `No agent with a console has run in ${home}: start it with \`swan-provider run --home ${home} --console 127.0.0.1:7777\` (or \`swan-provider service install\`).`,
  };
  if (!fs.existsSync(linksDir(home))) return none;
  const a = await ask(home, 'request', timeoutMs);
  if (typeof a?.url === 'string') return { ok: true, url: a.url };
  if (a?.error === 'no_console')
    return {
      ok: false,
      code: 'no_console_agent',
      message: `The agent in ${home} runs without a console: restart it with \`--console 127.0.0.1:7777\` (\`swan-provider service install\` does).`,
    };
  return {
    ok: false,
    code: 'no_answer',
    message: `The agent in ${home} did not answer within ${Math.round(timeoutMs / 1000)} s: it is not running, or runs without --console. \`swan-provider service status\` says whether the service runs.`,
  };
}

/** What the agent running in `home` answers `doctor`: its pid and its self-check's inputs (undefined: none answered in time). */
export async function askSelfCheck(home: string, timeoutMs = 2000): Promise<{ pid: number; checks: MachineChecks } | undefined> {
  if (!fs.existsSync(linksDir(home))) return undefined;
  const a = await ask(home, 'checks', timeoutMs);
  if (typeof a?.pid !== 'number') return undefined;
  return { pid: a.pid, checks: selfCheckOf(a.checks) };
}

/**
 * Waits until the agent running in `home` says no request is in flight (its scheduler drained), up to
 * `timeoutMs`: how many were in flight when asked, or undefined when it did not say so in time.
 */
export async function askIdle(home: string, timeoutMs: number): Promise<{ pid: number; heldFor: number | null } | undefined> {
  if (!fs.existsSync(linksDir(home))) return undefined;
  const a = await ask(home, 'idle', timeoutMs);
  if (typeof a?.pid !== 'number' || a.idle !== true) return undefined;
  return { pid: a.pid, heldFor: typeof a.heldFor === 'number' && a.heldFor >= 0 ? a.heldFor : null };
}

const count = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0;

/** The traffic of an answer, as far as it has the shape the verdict reads (the rest `doctor` reads itself). */
function selfCheckOf(v: unknown): MachineChecks {
  const t = (v as { traffic?: Record<string, unknown> } | null)?.traffic;
  return t && count(t.hubRequests) && count(t.connectedSince) && count(t.now)
    ? { traffic: { hubRequests: t.hubRequests, connectedSince: t.connectedSince, now: t.now } }
    : {};
}

type Answer = { url?: unknown; pid?: unknown; error?: unknown; checks?: unknown; idle?: unknown; heldFor?: unknown };

/** One request and its answer (undefined when none came in time). */
async function ask(home: string, kind: 'request' | 'ping' | 'checks' | 'idle', timeoutMs: number): Promise<Answer | undefined> {
  const dir = linksDir(home);
  const nonce = crypto.randomBytes(8).toString('hex');
  const answerFile = path.join(dir, `answer-${nonce}.json`);
  const got = new Promise<Answer | undefined>((resolve) => {
    const read = (): boolean => {
      try {
        const answer = JSON.parse(fs.readFileSync(answerFile, 'utf8')) as Answer;
        fs.rmSync(answerFile, { force: true });
        finish(answer);
        return true;
      } catch {
        return false;
      }
    };
    const watcher = fs.watch(dir, () => void read());
    watcher.on('error', () => undefined);
    const timer = setTimeout(() => finish(undefined), timeoutMs);
    const finish = (answer: Answer | undefined): void => {
      clearTimeout(timer);
      watcher.close();
      resolve(answer);
    };
  });
  fs.writeFileSync(path.join(dir, `${kind}-${nonce}`), '', { mode: 0o600 });
  const answer = await got;
  fs.rmSync(path.join(dir, `${kind}-${nonce}`), { force: true });
  return answer;
}

export async function linkCommand(o: { home: string; stdout?: NodeJS.WritableStream; stderr?: NodeJS.WritableStream; timeoutMs?: number }): Promise<number> {
  const r = await askForLink(o.home, o.timeoutMs);
  if (r.ok) {
    (o.stdout ?? process.stdout).write(`console: ${r.url}\n  (a one-time link: it opens one browser session)\n`);
    return 0;
  }
  (o.stderr ?? process.stderr).write(`${r.message} (${r.code})\n`);
  return 1;
}
