// A new one-time console link on demand, with or without a terminal: `swan-provider link` asks the agent
// running in the same home (src/core/config/home-questions.ts: a request file in a folder only the owner's
// account can write), which answers with a fresh link and prints it on its own output too; SIGUSR2 to the agent
// prints one as well (POSIX). A link is one-time (docs/security.md): whoever reads it later from a journal opens
// nothing. Also here, what the other commands make of the agent's answers: whether one runs (`service`),
// `doctor`'s self-check inputs, and whether it is idle (`update`).
import type { MachineChecks } from '../core/bridge/verdict';
import { askHome, homeAnswers } from '../core/config/home-questions';

/** SIGUSR2 prints a new link (POSIX; absent a console, nothing). Returns the function that stops listening. */
export function printLinkOnSignal(newUrl: (() => string) | undefined, print: (url: string) => void): () => void {
  if (!newUrl || process.platform === 'win32') return () => undefined;
  const onSignal = (): void => print(newUrl());
  process.on('SIGUSR2', onSignal);
  return () => {
    process.off('SIGUSR2', onSignal);
  };
}

export type LinkAnswer = { ok: true; url: string } | { ok: false; code: 'no_console_agent' | 'no_answer'; message: string };

/** The pid of an agent running in `home`, when one answers within `timeoutMs`. */
export async function agentInHome(home: string, timeoutMs = 2000): Promise<number | undefined> {
  const a = await askHome(home, 'ping', timeoutMs);
  return typeof a?.pid === 'number' ? a.pid : undefined;
}

/** Asks the agent running in `home` for a new link; waits up to `timeoutMs` for its answer. */
export async function askForLink(home: string, timeoutMs = 10_000): Promise<LinkAnswer> {
  const none: LinkAnswer = {
    ok: false,
    code: 'no_console_agent',
    message: `No agent with a console has run in ${home}: start it with \`swan-provider run --home ${home} --console 127.0.0.1:7777\` (or \`swan-provider service install\`).`,
  };
  if (!homeAnswers(home)) return none;
  const a = await askHome(home, 'request', timeoutMs);
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
  const a = await askHome(home, 'checks', timeoutMs);
  if (typeof a?.pid !== 'number') return undefined;
  return { pid: a.pid, checks: selfCheckOf(a.checks) };
}

/**
 * Waits until the agent running in `home` says no request is in flight (its scheduler drained), up to
 * `timeoutMs`: how many were in flight when asked, or undefined when it did not say so in time.
 */
export async function askIdle(home: string, timeoutMs: number): Promise<{ pid: number; heldFor: number | null } | undefined> {
  const a = await askHome(home, 'idle', timeoutMs);
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

export async function linkCommand(o: { home: string; stdout?: NodeJS.WritableStream; stderr?: NodeJS.WritableStream; timeoutMs?: number }): Promise<number> {
  const r = await askForLink(o.home, o.timeoutMs);
  if (r.ok) {
    (o.stdout ?? process.stdout).write(`console: ${r.url}\n  (a one-time link: it opens one browser session)\n`);
    return 0;
  }
  (o.stderr ?? process.stderr).write(`${r.message} (${r.code})\n`);
  return 1;
}
