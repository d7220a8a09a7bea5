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

  it('a lock lost while running is taken back (home_lock_regained), so a second start is refused again; not after release', async () => {
    const h = home();
    let lost!: () => void;
    const compromised = new Promise<void>((resolve) => (lost = resolve));
    let regained!: () => void;
    const back = new Promise<void>((resolve) => (regained = resolve));
    const lock = await lockHome(h, { onCompromised: () => lost(), onRegained: () => regained() });
    // What a disk gone read-only for a while, or a hand that cleans the home, does: the lock folder goes.
    fs.rmSync(path.join(h, 'agent.lock'), { recursive: true, force: true });
    await compromised;
    await back;
    expect(fs.existsSync(path.join(h, 'agent.lock'))).toBe(true);
    await expect(lockHome(h)).rejects.toMatchObject({ code: 'home_in_use' });
    expect(readHolder(h)?.pid).toBe(process.pid);
    await lock.release();
    expect(fs.existsSync(path.join(h, 'agent.lock'))).toBe(false);
    const next = await lockHome(h);
    await next.release();
  }, 30_000);

  it('a lost lock another agent took meanwhile is left to it', async () => {
    const h = home();
    let lost!: () => void;
    const compromised = new Promise<void>((resolve) => (lost = resolve));
    let regainedTimes = 0;
    let leftTo!: (pid: number) => void;
    const left = new Promise<number>((resolve) => (leftTo = resolve));
    const lock = await lockHome(h, { onCompromised: () => lost(), onRegained: () => regainedTimes++, onTakenOver: (holder) => leftTo(holder.pid) });
    fs.rmSync(path.join(h, 'agent.lock'), { recursive: true, force: true });
    await compromised;
    // Another agent (here a second holder in this process, named as another live pid) has the home now.
    fs.rmSync(path.join(h, 'agent.json'), { force: true });
    const other = await lockHome(h);
    fs.writeFileSync(path.join(h, 'agent.json'), JSON.stringify({ pid: process.ppid, host: os.hostname(), startedAt: Date.now() }));
    // The first lock's next try finds the home another's and leaves it (said once, nothing taken back).
    expect(await left).toBe(process.ppid);
    expect(regainedTimes).toBe(0);
    expect(readHolder(h)?.pid).toBe(process.ppid);
    await other.release();
    await lock.release();
  }, 30_000);

  it('a home that does not exist and cannot be made is home_unwritable, not a stack trace', async () => {
    const h = home();
    const file = path.join(h, 'not-a-folder');
    fs.writeFileSync(file, 'x');
    const err = await lockHome(path.join(file, 'home')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HomeLockError);
    expect((err as HomeLockError).code).toBe('home_unwritable');
  });
});
