// One agent per home. Two agents on one home share a node id (two hub connections that displace each
// other) and write one ledger together, so the second start is refused: a lock taken at start with
// proper-lockfile (a folder, `<home>/agent.lock`, its mtime kept fresh while the agent runs), and
// `<home>/agent.json` saying who holds it (pid, host, console address) so the refusal can name them.
// A lock left by an agent that died (SIGKILL, a crash, a power cut) is recovered: at once when its pid is
// gone on this host, else once proper-lockfile sees it stale (not refreshed for STALE_MS).
// The same first write also tells a read-only home apart, in one line, before anything else is opened.
import fs from 'node:fs';
import os from 'node:os';
import lockfile from 'proper-lockfile';
import { z } from 'zod';
import { CodedError } from '../../shared/bridge-error';
import { writeJsonAtomic } from './atomic-file';
import { homePath } from './home-layout';
import { processAlive } from '../base/process-alive';

/** Why the home cannot be taken: another agent has it, or it cannot be written. */
export type HomeLockErrorCode = 'home_in_use' | 'home_read_only' | 'home_unwritable';

export class HomeLockError extends CodedError<HomeLockErrorCode> {
  override name = 'HomeLockError';
}

/** A lock not refreshed for this long belongs to an agent that is gone (proper-lockfile's staleness). */
const STALE_MS = 10_000;
/** How often the running agent refreshes its lock (well inside STALE_MS, even on a loaded machine). */
const UPDATE_MS = 2_000;

const holderSchema = z.object({
  pid: z.number().int().positive(),
  host: z.string().max(255),
  startedAt: z.number(),
  console: z.string().max(512).optional(),
});

/** Who holds the home: what `agent.json` says. */
export type HomeHolder = z.infer<typeof holderSchema>;

export interface HomeLock {
  /** The console's address (no one-time code), for the refusal of a second start. */
  setConsole(url: string): void;
  /** Lets the home go (at stop). */
  release(): Promise<void>;
}

export interface LockHomeOptions {
  /** The lock was lost while running (the machine slept past STALE_MS, the folder was removed): said, not fatal. */
  onCompromised?: (err: Error) => void;
  /** A lost lock was taken back (tried every UPDATE_MS while agent.json names no other agent). */
  onRegained?: () => void;
  /** Another agent has the home since the lock was lost: it is left to it, and this one said so. */
  onTakenOver?: (holder: HomeHolder) => void;
}

/** What agent.json says, if it says something valid (a file of another version or a torn write reads as nothing). */
export function readHolder(home: string): HomeHolder | undefined {
  try {
    const parsed = holderSchema.safeParse(JSON.parse(fs.readFileSync(homePath(home, 'agentInfo'), 'utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

function codeOf(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
}

/** The one line for a home that cannot be written, from the error of the first write. */
export function homeWriteError(home: string, err: unknown): HomeLockError {
  const code = codeOf(err);
  if (code === 'EROFS') {
    return new HomeLockError(
      'home_read_only',
      `The home folder ${home} is on a read-only disk: the agent keeps its ledger, log and identity there. Make the disk writable, or start with another home (--home PATH or SWAN_HOME).`,
    );
  }
  const why = code === 'ENOSPC' ? 'the disk is full' : code === 'EACCES' || code === 'EPERM' ? 'this user may not write to it' : (err as Error).message;
  return new HomeLockError(
    'home_unwritable',
    `The home folder ${home} cannot be written (${why}). Fix that, or start with another home (--home PATH or SWAN_HOME).`,
  );
}

function inUse(home: string, holder: HomeHolder | undefined): HomeLockError {
  const who = holder
    ? ` (pid ${holder.pid}${holder.host !== os.hostname() ? ` on ${holder.host}` : ''}${holder.console ? `, console ${holder.console}` : ''})`
    : '';
  return new HomeLockError(
    'home_in_use',
    `Another agent is already running on the home ${home}${who}. Two agents on one home would share its node and its ledger: stop that one first, or give this one another home (--home PATH or SWAN_HOME).`,
  );
}

/** A lock whose holder is known to be gone: its pid is not running on this host. */
function heldByTheDead(holder: HomeHolder | undefined): boolean {
  return holder !== undefined && holder.host === os.hostname() && holder.pid !== process.pid && !processAlive(holder.pid);
}

/** Takes the home for this process, or throws HomeLockError (in use, read-only, not writable). */
export async function lockHome(home: string, o: LockHomeOptions = {}): Promise<HomeLock> {
  const lockfilePath = homePath(home, 'agentLock');
  let released = false;
  let retry: NodeJS.Timeout | undefined;
  // A lost lock (a disk read-only for a while, a machine asleep past STALE_MS, the folder removed) is taken
  // back as soon as proper-lockfile gives it (at once when the folder is gone, once it is stale otherwise),
  // unless another agent has the home meanwhile: then it is left to it, and onTakenOver says so.
  const regain = (): void => {
    if (released || retry) return;
    retry = setTimeout(() => {
      retry = undefined;
      if (released) return;
      const now = readHolder(home);
      if (now && now.pid !== process.pid) return void o.onTakenOver?.(now);
      take().then(
        (again) => {
          if (released) return void again().catch(() => undefined);
          release = again;
          write();
          o.onRegained?.();
        },
        () => regain(),
      );
    }, UPDATE_MS);
    retry.unref();
  };
  const take = (): Promise<() => Promise<void>> =>
    lockfile.lock(home, {
      lockfilePath,
      realpath: false,
      stale: STALE_MS,
      update: UPDATE_MS,
      retries: 0,
      onCompromised: (err) => {
        o.onCompromised?.(err);
        regain();
      },
    });
  let release: () => Promise<void>;
  try {
    release = await take();
  } catch (err) {
    if (codeOf(err) !== 'ELOCKED') throw homeWriteError(home, err);
    const holder = readHolder(home);
    if (!heldByTheDead(holder)) throw inUse(home, holder);
    fs.rmSync(lockfilePath, { recursive: true, force: true });
    try {
      release = await take();
    } catch (again) {
      throw codeOf(again) === 'ELOCKED' ? inUse(home, readHolder(home)) : homeWriteError(home, again);
    }
  }
  // proper-lockfile makes its folder with the process umask (often 0755); every folder under the home is the owner's alone.
  try {
    fs.chmodSync(lockfilePath, 0o700);
  } catch {
    // The lock holds either way; a mode it cannot set is not a reason to stop.
  }
  let holder: HomeHolder = { pid: process.pid, host: os.hostname(), startedAt: Date.now() };
  const write = (): void => {
    try {
      writeJsonAtomic(homePath(home, 'agentInfo'), holder);
    } catch {
      // Who holds the lock is only for the refusal's words: the lock itself is what counts.
    }
  };
  write();
  return {
    setConsole(url: string) {
      holder = { ...holder, console: url };
      write();
    },
    async release() {
      if (released) return;
      released = true;
      clearTimeout(retry);
      try {
        if (readHolder(home)?.pid === process.pid) fs.rmSync(homePath(home, 'agentInfo'), { force: true });
      } catch {
        // A home that turned read-only keeps the file: the next start sees its process gone and takes over.
      }
      await release().catch(() => undefined); // already gone (compromised): nothing to let go
    },
  };
}
