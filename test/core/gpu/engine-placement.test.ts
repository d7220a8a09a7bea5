// gpusOfListeningPort: on which GPUs a found engine runs, "where the driver says". Against a fake /proc
// (net/tcp and net/tcp6 in the kernel's format, pid folders with fd symlinks and stat files), and on
// Linux against the real /proc with a socket this test process (or a child it starts) listens on.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { gpusOfListeningPort, listeningInodes, MAX_FDS_PER_PID, MAX_NET_TABLE_BYTES, MAX_PIDS, parentPidOfStat } from '../../../src/core/gpu/engine-placement';

// net/tcp and net/tcp6 as the kernel writes them (proc(5); lines as on a real machine, addresses hex IP:PORT,
// IPv4 in network order read as a little-endian word: 127.0.0.1 is 0100007F). 8080 = 1F90, 11434 = 2CAA.
const TCP_HEADER = '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode';
const TCP6_HEADER =
  '  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode';
/** 127.0.0.1:8080 LISTEN, inode 12345. */
const LISTEN_8080 = '   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 12345 1 0000000000000000 100 0 0 10 0';
/** 0.0.0.0:8081 LISTEN, inode 11111: another port. */
const LISTEN_8081 = '   1: 00000000:1F91 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 11111 1 0000000000000000 100 0 0 10 0';
/** 127.0.0.1:8080 <- 127.0.0.1:51234 ESTABLISHED (the accepted side), inode 23456. */
const ESTAB_8080 = '   2: 0100007F:1F90 0100007F:C822 01 00000000:00000000 00:00000000 00000000  1000        0 23456 1 0000000000000000 20 4 30 10 -1';
/** 127.0.0.1:51234 -> 127.0.0.1:8080 ESTABLISHED (the client side: remote port 8080), inode 23457. */
const CLIENT_8080 = '   3: 0100007F:C822 0100007F:1F90 01 00000000:00000000 00:00000000 00000000  1000        0 23457 1 0000000000000000 20 4 30 10 -1';
/** [::]:11434 LISTEN, inode 34567 (Ollama). */
const LISTEN6_11434 =
  '   0: 00000000000000000000000000000000:2CAA 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 34567 1 0000000000000000 100 0 0 10 0';
/** [::1]:11434 <- [::1]:40000 ESTABLISHED, inode 34568. */
const ESTAB6_11434 =
  '   1: 00000000000000000000000001000000:2CAA 00000000000000000000000001000000:9C40 01 00000000:00000000 00:00000000 00000000  1000        0 34568 1 0000000000000000 20 4 30 10 -1';

const GPUS = [
  { index: 0, uuid: 'GPU-aaaaaaaa-0000-0000-0000-000000000000' },
  { index: 1, uuid: 'GPU-bbbbbbbb-0000-0000-0000-000000000000' },
  { index: 2, uuid: 'GPU-cccccccc-0000-0000-0000-000000000000' },
  { index: 3, uuid: 'GPU-dddddddd-0000-0000-0000-000000000000' },
];
/** A compute process as nvidia-smi lists it: `pid` on GPU `index` of GPUS. */
const on = (pid: number, index: number) => ({ pid, gpuUuid: uuidOf(index) });
function uuidOf(index: number): string {
  const uuid = GPUS.find((g) => g.index === index)?.uuid;
  if (!uuid) throw new Error(`no GPU ${index}`);
  return uuid;
}

const roots: string[] = [];
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
  for (const r of roots.splice(0)) fs.rmSync(r, { recursive: true, force: true });
});

/** Takes all permissions off a folder (given back after the test, before the fake tree is removed). */
function lockOut(dir: string): void {
  fs.chmodSync(dir, 0o000);
  cleanups.push(() => fs.chmodSync(dir, 0o755));
}

interface FakeProc {
  root: string;
  tcp(...lines: string[]): void;
  tcp6(...lines: string[]): void;
  /** A process: its stat (with `comm` and `ppid`) and its open files (fd number -> link target). */
  proc(pid: number, p: { ppid: number; comm?: string; fds?: Record<number, string> }): string;
}

function fakeProc(): FakeProc {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-proc-'));
  roots.push(root);
  fs.mkdirSync(path.join(root, 'net'));
  // Non-pid entries a real /proc has next to the pids.
  fs.mkdirSync(path.join(root, 'sys'));
  fs.writeFileSync(path.join(root, 'uptime'), '12345.67 23456.78\n');
  return {
    root,
    tcp: (...lines) => fs.writeFileSync(path.join(root, 'net', 'tcp'), [TCP_HEADER, ...lines, ''].join('\n')),
    tcp6: (...lines) => fs.writeFileSync(path.join(root, 'net', 'tcp6'), [TCP6_HEADER, ...lines, ''].join('\n')),
    proc(pid, p) {
      const dir = path.join(root, String(pid));
      fs.mkdirSync(path.join(dir, 'fd'), { recursive: true });
      const comm = p.comm ?? 'proc';
      // The real layout: pid (comm) state ppid pgrp session tty_nr tpgid flags minflt …
      fs.writeFileSync(
        path.join(dir, 'stat'),
        `${pid} (${comm}) S ${p.ppid} ${pid} ${pid} 0 -1 4194304 2390 0 0 0 12 3 0 0 20 0 4 0 123456 1234567890 2345 18446744073709551615 1 1 0 0 0 0 0 4096 17663 0 0 0 17 3 0 0 0 0 0\n`,
      );
      const fds = { 0: '/dev/null', 1: 'pipe:[98765]', 2: 'pipe:[98765]', ...p.fds };
      for (const [fd, target] of Object.entries(fds)) fs.symlinkSync(target, path.join(dir, 'fd', fd));
      return dir;
    },
  };
}

/** The scene most tests share: llama-server (pid 100) listening on 8080, a client (pid 500) connected to it, on another GPU. */
function llamaServerScene(): FakeProc {
  const p = fakeProc();
  p.tcp(LISTEN_8080, LISTEN_8081, ESTAB_8080, CLIENT_8080);
  p.tcp6();
  p.proc(1, { ppid: 0, comm: 'systemd' });
  p.proc(100, { ppid: 1, comm: 'llama-server', fds: { 3: 'socket:[12345]', 4: 'anon_inode:[eventpoll]', 5: 'socket:[23456]', 6: '/models/qwen.gguf' } });
  p.proc(500, { ppid: 1, comm: 'client app', fds: { 3: 'socket:[23457]' } });
  p.proc(600, { ppid: 1, comm: 'other server', fds: { 3: 'socket:[11111]' } });
  return p;
}

describe('gpusOfListeningPort with a fake /proc', () => {
  it('the process listening on the port runs on GPU 0; ESTABLISHED sockets on that port and other listeners are ignored', async () => {
    const p = llamaServerScene();
    // The client (connected to 8080) is on GPU 1 and the 8081 listener on GPU 2: neither is the engine.
    const computeApps = [on(500, 1), on(100, 0), on(600, 2)];
    expect(await gpusOfListeningPort(8080, { procRoot: p.root, computeApps, gpus: GPUS })).toEqual({ gpus: [0] });
    expect(await gpusOfListeningPort(8081, { procRoot: p.root, computeApps, gpus: GPUS })).toEqual({ gpus: [2] });
  });

  it('Ollama: the server listens (tcp6) but its runner child and grandchild do the GPU work; comm with spaces and ")" is parsed after the last ")"', async () => {
    const p = fakeProc();
    p.tcp(CLIENT_8080);
    p.tcp6(LISTEN6_11434, ESTAB6_11434);
    p.proc(1, { ppid: 0, comm: 'systemd' });
    p.proc(200, { ppid: 1, comm: 'ollama', fds: { 3: 'socket:[34567]', 7: 'socket:[34568]' } });
    p.proc(201, { ppid: 200, comm: 'ollama (runner) x', fds: { 3: 'pipe:[5]' } });
    p.proc(202, { ppid: 201, comm: 'a) S 1 (b', fds: {} });
    // Not in the tree: its comm makes a naive parse (after the first ")") read ppid 200.
    p.proc(301, { ppid: 1, comm: 'evil) S 200 1 1', fds: {} });
    p.proc(302, { ppid: 1, comm: 'unrelated', fds: {} });
    const computeApps = [on(302, 3), on(301, 2), on(202, 1)];
    expect(await gpusOfListeningPort(11434, { procRoot: p.root, computeApps, gpus: GPUS })).toEqual({ gpus: [1] });
    expect(await gpusOfListeningPort(11434, { procRoot: p.root, computeApps: [...computeApps, on(201, 0)], gpus: GPUS })).toEqual({ gpus: [0, 1] });
  });

  it('on two GPUs: sorted, unique indexes (UUIDs matched whatever their case)', async () => {
    const p = llamaServerScene();
    const computeApps = [on(100, 3), { pid: 100, gpuUuid: uuidOf(1).toLowerCase() }, on(100, 3), on(500, 2)];
    expect(await gpusOfListeningPort(8080, { procRoot: p.root, computeApps, gpus: GPUS })).toEqual({ gpus: [1, 3] });
  });

  it('nothing listens on the port: no_listener (an ESTABLISHED socket or a remote port 8080 is no listener)', async () => {
    const p = fakeProc();
    p.tcp(LISTEN_8081, ESTAB_8080, CLIENT_8080);
    p.tcp6(ESTAB6_11434);
    p.proc(100, { ppid: 1, comm: 'llama-server', fds: { 5: 'socket:[23456]' } });
    p.proc(500, { ppid: 1, comm: 'client', fds: { 3: 'socket:[23457]' } });
    const opts = { procRoot: p.root, computeApps: [on(100, 0), on(500, 1)], gpus: GPUS };
    expect(await gpusOfListeningPort(8080, opts)).toEqual({ unknown: 'no_listener' });
    expect(await gpusOfListeningPort(11434, opts)).toEqual({ unknown: 'no_listener' });
    expect(await gpusOfListeningPort(51234, opts)).toEqual({ unknown: 'no_listener' }); // the client's local port: not LISTEN
  });

  it('a LISTEN socket that no process holds (it just closed): no_listener; no tcp6 table at all is fine', async () => {
    const p = fakeProc();
    p.tcp(LISTEN_8080);
    p.proc(100, { ppid: 1, comm: 'llama-server', fds: { 3: 'socket:[99999]' } });
    expect(await gpusOfListeningPort(8080, { procRoot: p.root, computeApps: [on(100, 0)], gpus: GPUS })).toEqual({ unknown: 'no_listener' });
  });

  it('the listener uses no GPU: not_on_gpu (also when its GPU UUID is missing or not among the GPUs)', async () => {
    const p = llamaServerScene();
    const gpus = GPUS;
    expect(await gpusOfListeningPort(8080, { procRoot: p.root, computeApps: [], gpus })).toEqual({ unknown: 'not_on_gpu' });
    expect(await gpusOfListeningPort(8080, { procRoot: p.root, computeApps: [on(500, 0)], gpus })).toEqual({ unknown: 'not_on_gpu' });
    const odd = [{ pid: 100 }, { pid: 100, gpuUuid: 'GPU-ffffffff-0000-0000-0000-000000000000' }];
    expect(await gpusOfListeningPort(8080, { procRoot: p.root, computeApps: odd, gpus })).toEqual({ unknown: 'not_on_gpu' });
    expect(await gpusOfListeningPort(8080, { procRoot: p.root, computeApps: [on(100, 0)], gpus: [{ index: 0 }] })).toEqual({ unknown: 'not_on_gpu' });
  });

  it('processes that vanished mid-scan (no fd folder, no stat, a dangling pid folder) are skipped, never an error', async () => {
    const p = llamaServerScene();
    fs.mkdirSync(path.join(p.root, '700')); // gone: only the folder is left
    const half = p.proc(701, { ppid: 100, comm: 'half gone', fds: { 3: 'socket:[12345]' } });
    fs.rmSync(path.join(half, 'stat')); // holds the socket, but its stat is gone
    const child = p.proc(702, { ppid: 100, comm: 'worker', fds: {} });
    fs.rmSync(path.join(child, 'fd'), { recursive: true });
    const computeApps = [on(702, 2), on(701, 3)];
    expect(await gpusOfListeningPort(8080, { procRoot: p.root, computeApps, gpus: GPUS })).toEqual({ gpus: [2, 3] });
  });

  it.skipIf(process.getuid?.() === 0)('a process whose fds cannot be read (another user): no_access when the listener is not found elsewhere', async () => {
    const p = llamaServerScene();
    lockOut(path.join(p.root, '100', 'fd'));
    const opts = { procRoot: p.root, computeApps: [on(100, 0)], gpus: GPUS };
    expect(await gpusOfListeningPort(8080, opts)).toEqual({ unknown: 'no_access' });
    // The unreadable process does not hide a listener found elsewhere.
    expect(await gpusOfListeningPort(8081, { ...opts, computeApps: [on(600, 2)] })).toEqual({ gpus: [2] });
  });

  it('a net table that cannot be read and holds no answer: no_access', async () => {
    const p = fakeProc();
    fs.mkdirSync(path.join(p.root, 'net', 'tcp')); // reading it fails (EISDIR), not "absent"
    p.tcp6();
    expect(await gpusOfListeningPort(8080, { procRoot: p.root, computeApps: [], gpus: GPUS })).toEqual({ unknown: 'no_access' });
  });

  it(`bounded: at most ${MAX_FDS_PER_PID} fds a process; cut short, it says no_access rather than no_listener`, async () => {
    const p = fakeProc();
    p.tcp(LISTEN_8080);
    const fds: Record<number, string> = {};
    for (let fd = 3; fd < MAX_FDS_PER_PID + 10; fd++) fds[fd] = `socket:[${50000 + fd}]`;
    p.proc(100, { ppid: 1, comm: 'many fds', fds });
    const opts = { procRoot: p.root, computeApps: [on(100, 0)], gpus: GPUS };
    expect(await gpusOfListeningPort(8080, opts)).toEqual({ unknown: 'no_access' });
    // Under the bound, the same process is read to the end: nobody holds 12345.
    for (let fd = MAX_FDS_PER_PID - 3; fd < MAX_FDS_PER_PID + 10; fd++) fs.rmSync(path.join(p.root, '100', 'fd', String(fd)));
    expect(await gpusOfListeningPort(8080, opts)).toEqual({ unknown: 'no_listener' });
  });

  it(`bounded: at most ${MAX_PIDS} processes; more, and a listener not found among them is no_access`, async () => {
    const p = fakeProc();
    p.tcp(LISTEN_8080);
    // Thousands of processes that do not hold the socket: pid 1's folder, and links to one shared folder
    // (each looked at like a process of its own; links are quick to make and remove, unlike folders).
    const shared = p.proc(1, { ppid: 0, comm: 'some process', fds: { 3: 'socket:[777]' } });
    for (const fd of ['0', '1', '2']) fs.rmSync(path.join(shared, 'fd', fd)); // one fd: a quicker scan
    for (let pid = 2; pid <= MAX_PIDS; pid++) fs.symlinkSync(shared, path.join(p.root, String(pid)));
    const opts = { procRoot: p.root, computeApps: [], gpus: GPUS };
    expect(await gpusOfListeningPort(8080, opts)).toEqual({ unknown: 'no_listener' }); // exactly MAX_PIDS: all looked at
    fs.symlinkSync(shared, path.join(p.root, String(MAX_PIDS + 1)));
    expect(await gpusOfListeningPort(8080, opts)).toEqual({ unknown: 'no_access' });
  });

  it(`bounded: net/tcp is read up to ${MAX_NET_TABLE_BYTES / 1024 / 1024} MB (the kernel lists LISTEN sockets first)`, async () => {
    const p = fakeProc();
    p.proc(100, { ppid: 1, comm: 'llama-server', fds: { 3: 'socket:[12345]' } });
    const filler = CLIENT_8080.replace('   3:', '   9:');
    const lines = Array.from({ length: Math.ceil(MAX_NET_TABLE_BYTES / (filler.length + 1)) }, () => filler);
    const opts = { procRoot: p.root, computeApps: [on(100, 0)], gpus: GPUS };
    p.tcp(LISTEN_8080, ...lines);
    expect(await gpusOfListeningPort(8080, opts)).toEqual({ gpus: [0] });
    p.tcp(...lines, LISTEN_8080); // beyond the cap: not read
    expect(await gpusOfListeningPort(8080, opts)).toEqual({ unknown: 'no_listener' });
  });

  it('not Linux and no procRoot given: not_linux (without reading anything)', async () => {
    const real = Object.getOwnPropertyDescriptor(process, 'platform') as PropertyDescriptor;
    Object.defineProperty(process, 'platform', { ...real, value: 'darwin' });
    cleanups.push(() => Object.defineProperty(process, 'platform', real));
    expect(await gpusOfListeningPort(8080, { computeApps: [on(1, 0)], gpus: GPUS })).toEqual({ unknown: 'not_linux' });
    // A procRoot given is read whatever the platform.
    const p = llamaServerScene();
    expect(await gpusOfListeningPort(8080, { procRoot: p.root, computeApps: [on(100, 0)], gpus: GPUS })).toEqual({ gpus: [0] });
  });

  it('a port out of range is a programming error', async () => {
    const opts = { procRoot: '/nonexistent', computeApps: [], gpus: [] };
    for (const port of [0, -1, 65536, 80.5, Number.NaN]) await expect(gpusOfListeningPort(port, opts)).rejects.toThrow(RangeError);
  });
});

describe('the parsers', () => {
  it('listeningInodes: LISTEN lines on the local port only, IPv4 and IPv6', () => {
    const tcp = [TCP_HEADER, LISTEN_8080, LISTEN_8081, ESTAB_8080, CLIENT_8080, ''].join('\n');
    expect(listeningInodes(tcp, 8080)).toEqual(['12345']);
    expect(listeningInodes(tcp, 8081)).toEqual(['11111']);
    expect(listeningInodes(tcp, 51234)).toEqual([]);
    expect(listeningInodes([TCP6_HEADER, LISTEN6_11434, ESTAB6_11434].join('\n'), 11434)).toEqual(['34567']);
    expect(listeningInodes(`${TCP_HEADER}\n${LISTEN_8080.slice(0, 60)}`, 8080)).toEqual([]); // a line cut short
  });

  it('parentPidOfStat: field 4, counted after the last ")"', () => {
    expect(parentPidOfStat('4242 (llama-server) S 17 4242 4242 0 -1 4194304')).toBe(17);
    expect(parentPidOfStat('4243 (evil) S 200 1 1) R 1 4243 4243 0 -1')).toBe(1);
    expect(parentPidOfStat('4244 (with space) S 1) (x) S 99 4244')).toBe(99);
    expect(parentPidOfStat('garbage')).toBeUndefined();
  });
});

describe.runIf(process.platform === 'linux')('gpusOfListeningPort with the real /proc', () => {
  const servers: net.Server[] = [];
  const children: ChildProcess[] = [];
  afterEach(async () => {
    for (const c of children.splice(0)) c.kill('SIGKILL');
    for (const s of servers.splice(0)) await new Promise<void>((resolve) => s.close(() => resolve()));
  });

  async function listen(host: string): Promise<{ server: net.Server; port: number }> {
    const server = net.createServer();
    servers.push(server);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, host, () => resolve());
    });
    return { server, port: (server.address() as net.AddressInfo).port };
  }

  const gpus = [{ index: 1, uuid: 'GPU-x' }];

  it('finds this test process listening on 127.0.0.1 (net/tcp)', async () => {
    const { server, port } = await listen('127.0.0.1');
    expect(await gpusOfListeningPort(port, { computeApps: [{ pid: process.pid, gpuUuid: 'GPU-x' }], gpus })).toEqual({ gpus: [1] });
    expect(await gpusOfListeningPort(port, { computeApps: [{ pid: process.ppid, gpuUuid: 'GPU-x' }], gpus })).toEqual({ unknown: 'not_on_gpu' });
    await new Promise<void>((resolve) => server.close(() => resolve()));
    expect(await gpusOfListeningPort(port, { computeApps: [{ pid: process.pid, gpuUuid: 'GPU-x' }], gpus })).toEqual({ unknown: 'no_listener' });
  });

  it.runIf(fs.existsSync('/proc/net/tcp6'))('finds this test process listening on ::1 (net/tcp6)', async () => {
    let port: number;
    try {
      port = (await listen('::1')).port;
    } catch {
      return; // no IPv6 loopback on this machine
    }
    expect(await gpusOfListeningPort(port, { computeApps: [{ pid: process.pid, gpuUuid: 'GPU-x' }], gpus })).toEqual({ gpus: [1] });
  });

  it('a child process listens and its own child is the one on the GPU (the Ollama shape, real process tree)', async () => {
    // The child listens, starts a grandchild (sleep), and prints its port and the grandchild's pid.
    const script = [
      "const net = require('node:net');",
      "const { spawn } = require('node:child_process');",
      "const s = net.createServer().listen(0, '127.0.0.1', () => {",
      "  const g = spawn('sleep', ['60'], { stdio: 'ignore' });",
      "  process.on('SIGTERM', () => { g.kill('SIGKILL'); process.exit(0); });",
      '  console.log(JSON.stringify({ port: s.address().port, grandchild: g.pid }));',
      '});',
    ].join('\n');
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(child);
    let grandchild = 0;
    cleanups.push(() => {
      if (grandchild > 0) {
        try {
          process.kill(grandchild, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    });
    const line = await new Promise<string>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`child exited (${code})`)));
      readline.createInterface({ input: child.stdout as NodeJS.ReadableStream }).once('line', resolve);
    });
    const info = JSON.parse(line) as { port: number; grandchild: number };
    grandchild = info.grandchild;
    const parent = { pid: process.pid, gpuUuid: 'GPU-y' }; // the test process is the child's parent, not its descendant
    const twoGpus = [...gpus, { index: 0, uuid: 'GPU-y' }];
    expect(await gpusOfListeningPort(info.port, { computeApps: [{ pid: info.grandchild, gpuUuid: 'GPU-x' }, parent], gpus: twoGpus })).toEqual({ gpus: [1] });
    expect(await gpusOfListeningPort(info.port, { computeApps: [parent], gpus: twoGpus })).toEqual({ unknown: 'not_on_gpu' });
  });
});
