// The questions one program asks the agent running in the same home, through a folder only the owner's
// account can write (`<home>/console-links/`, 0700, as approvals/ is): the asker drops `<kind>-<nonce>`,
// the agent answers `answer-<nonce>.json` (0600). Kinds: `request` (a new one-time console link), `ping`
// (is one running: its pid), `checks` (`doctor`: the self-check's inputs) and `idle` (`swan-provider update`:
// answered once no request is in flight). Both hosts answer (the CLI's `run` and the desktop app), through
// Agent.answerHomeQuestions; what each asker makes of an answer is the CLI's (src/cli/console-link.ts).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { writeJsonAtomic } from './atomic-file';
import { homePath } from './home-layout';

export type HomeQuestion = 'request' | 'ping' | 'checks' | 'idle';

const REQUEST = /^(request|ping|checks|idle)-([0-9a-f]{16})$/;
const DIR_MODE = 0o700;

function questionsDir(home: string): string {
  return homePath(home, 'consoleLinks');
}

/** Whether an agent has ever answered in `home` (the folder exists): without it nobody can answer. */
export function homeAnswers(home: string): boolean {
  return fs.existsSync(questionsDir(home));
}

export interface HomeAnswers {
  /** A new one-time console link (absent: the agent runs without a console, and a link request is told so). */
  newUrl?: () => string;
  /** Called with each link handed out, so the agent's own output shows it too. */
  printUrl?: (url: string) => void;
  /** The self-check's inputs as the agent reads them now (plain data). */
  selfCheck?: () => unknown;
  /** Resolves once no request is in flight, with how many were when asked. */
  idle?: () => Promise<number>;
}

/** Answers the questions of other programs while the agent runs; returns the function that stops it. */
export function serveHomeQuestions(home: string, answers: HomeAnswers): () => void {
  const dir = questionsDir(home);
  fs.mkdirSync(dir, { recursive: true, mode: DIR_MODE });
  fs.chmodSync(dir, DIR_MODE);
  const reply = (nonce: string, body: unknown): void => writeJsonAtomic(path.join(dir, `answer-${nonce}.json`), body);
  const answer = (name: string): void => {
    const m = REQUEST.exec(name);
    if (!m) return;
    const [, kind, nonce] = m as unknown as [string, HomeQuestion, string];
    try {
      fs.rmSync(path.join(dir, name));
    } catch {
      return; // answered already (a second event for the same file)
    }
    // A ping (`service install` asking whether an agent runs here) gets the pid and no link.
    if (kind === 'ping') return reply(nonce, { pid: process.pid });
    if (kind === 'idle') {
      const done = (heldFor: number | null): void => reply(nonce, { pid: process.pid, idle: true, heldFor });
      if (!answers.idle) return done(null);
      void answers.idle().then(done, () => undefined);
      return;
    }
    if (kind === 'checks') return reply(nonce, { pid: process.pid, checks: answers.selfCheck?.() ?? null });
    if (!answers.newUrl) return reply(nonce, { error: 'no_console' });
    const url = answers.newUrl();
    reply(nonce, { url });
    answers.printUrl?.(url);
  };
  // Requests left from before this agent started are stale: their asker gave up.
  for (const n of fs.readdirSync(dir)) fs.rmSync(path.join(dir, n), { force: true });
  const watcher = fs.watch(dir, (_event, name) => {
    if (name) answer(name.toString());
  });
  watcher.on('error', () => undefined);
  return () => watcher.close();
}

/** An answer as it came: every field is checked by whoever reads it. */
export type HomeAnswer = { url?: unknown; pid?: unknown; error?: unknown; checks?: unknown; idle?: unknown; heldFor?: unknown };

/** One question and its answer (undefined when none came within `timeoutMs`, or nobody answers in `home`). */
export async function askHome(home: string, kind: HomeQuestion, timeoutMs: number): Promise<HomeAnswer | undefined> {
  if (!homeAnswers(home)) return undefined;
  const dir = questionsDir(home);
  const nonce = crypto.randomBytes(8).toString('hex');
  const answerFile = path.join(dir, `answer-${nonce}.json`);
  const got = new Promise<HomeAnswer | undefined>((resolve) => {
    const read = (): boolean => {
      try {
        const answer = JSON.parse(fs.readFileSync(answerFile, 'utf8')) as HomeAnswer;
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
    const finish = (answer: HomeAnswer | undefined): void => {
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
