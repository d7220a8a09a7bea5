// One agent per home (config/home-lock.ts): the lock refuses a second holder naming the first, recovers
// a lock whose holder is gone (its pid dead, or not refreshed past the stale time), and lets go on release.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HomeLockError, lockHome, readHolder } from '../../../src/core/config/home-lock';

const homes: string[] = [];
afterEach(() => {
  for (const h of homes.splice(0)) fs.rmSync(h, { recursive: true, force: true });
});
function home(): string {
  const h = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-home-lock-'));
  homes.push(h);
  return h;
}

/** A pid that was running a moment ago and is not now. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', '0']);
  return r.pid!;
}

describe('lockHome', () => {
  it('a second holder is refused with home_in_use, naming the home, the pid and the console', async () => {
    const h = home();
    const lock = await lockHome(h);
    lock.setConsole('http://127.0.0.1:7777/');
    expect(readHolder(h)).toMatchObject({ pid: process.pid, host: os.hostname(), console: 'http://127.0.0.1:7777/' });
    const err = await lockHome(h).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HomeLockError);
    expect((err as HomeLockError).code).toBe('home_in_use');
    expect((err as HomeLockError).message).toContain(h);
    expect((err as HomeLockError).message).toContain(`pid ${process.pid}`);
    expect((err as HomeLockError).message).toContain('http://127.0.0.1:7777/');
    await lock.release();
    expect(fs.existsSync(path.join(h, 'agent.json'))).toBe(false);
    expect(fs.existsSync(path.join(h, 'agent.lock'))).toBe(false);
    await (await lockHome(h)).release(); // free again
  });

  it('a lock whose holder died on this host is taken over at once', async () => {
    const h = home();
    fs.mkdirSync(path.join(h, 'agent.lock')); // fresh mtime: not stale by time
    fs.writeFileSync(path.join(h, 'agent.json'), JSON.stringify({ pid: deadPid(), host: os.hostname(), startedAt: Date.now() }));
    const lock = await lockHome(h);
    expect(readHolder(h)?.pid).toBe(process.pid);
    await lock.release();
  });

  it('a lock nobody refreshed past the stale time is taken over, even without agent.json', async () => {
    const h = home();
    const dir = path.join(h, 'agent.lock');
    fs.mkdirSync(dir);
    const old = new Date(Date.now() - 60_000);
    fs.utimesSync(dir, old, old);
    const lock = await lockHome(h);
    await lock.release();
  });

  it('a fresh lock with no word of its holder is refused (it may be starting)', async () => {
    const h = home();
    fs.mkdirSync(path.join(h, 'agent.lock'));
    const err = await lockHome(h).catch((e: unknown) => e);
    expect((err as HomeLockError).code).toBe('home_in_use');
  });

  it('a home that does not exist and cannot be made is home_unwritable, not a stack trace', async () => {
    const h = home();
    const file = path.join(h, 'not-a-folder');
    fs.writeFileSync(file, 'x');
    const err = await lockHome(path.join(file, 'home')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HomeLockError);
    expect((err as HomeLockError).code).toBe('home_unwritable');
  });
});
