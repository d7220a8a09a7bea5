// On which GPUs a found engine (one the agent did not start) runs, "where the driver says": the process
// listening on the engine's port is found through Linux /proc (the LISTEN socket's inode in net/tcp and
// net/tcp6, then the process holding that socket among /proc/<pid>/fd), and that process and its
// descendants are matched against the driver's compute processes (nvidia-smi --query-compute-apps).
// Descendants matter: Ollama's server listens on 11434 but a child `ollama runner` does the GPU work.
//
// What it cannot see, it says so rather than guess: another user's processes (no_access), an engine in
// another network namespace, e.g. a container behind a published port (no_listener, or the proxy process,
// which is not on a GPU). Every read is bounded (pids, fds per pid, bytes per file), and a process that
// vanishes mid-scan is skipped, never an error.
import fs from 'node:fs';
import path from 'node:path';

export interface EnginePlacementOptions {
  /** Where proc is mounted ('/proc' by default; a test gives a fake tree). */
  procRoot?: string;
  /** The driver's compute processes (nvidia-smi --query-compute-apps=pid,gpu_uuid). */
  computeApps: Array<{ pid: number; gpuUuid?: string }>;
  /** The GPUs, to map a compute process's GPU UUID to its index. */
  gpus: Array<{ index: number; uuid?: string }>;
}

/** Why the placement is unknown: not Linux; nothing listens on the port; the listener is not visible to us; it uses no GPU. */
export type PlacementUnknown = 'not_linux' | 'no_listener' | 'no_access' | 'not_on_gpu';

export type EnginePlacement = { gpus: number[] } | { unknown: PlacementUnknown };

/** At most this many processes are looked at. */
export const MAX_PIDS = 4096;
/** At most this many open files are looked at per process (fds are listed lowest first; a listener opens its socket early). */
export const MAX_FDS_PER_PID = 1024;
/** At most this much of net/tcp and net/tcp6 is read (the kernel lists LISTEN sockets first, before established ones). */
export const MAX_NET_TABLE_BYTES = 4 * 1024 * 1024;
/** At most this much of a /proc/<pid>/stat (a real one is a few hundred bytes). */
const MAX_STAT_BYTES = 16 * 1024;
/** Processes looked at in parallel (few: the reads share libuv's small thread pool with the agent's other file work). */
const CONCURRENCY = 8;

const TCP_LISTEN = '0A';

/** Which GPU indexes run the process listening on `port` on this machine (Linux /proc), or why it cannot say. */
export async function gpusOfListeningPort(port: number, opts: EnginePlacementOptions): Promise<EnginePlacement> {
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new RangeError(`Not a TCP port: ${port}`);
  if (opts.procRoot === undefined && process.platform !== 'linux') return { unknown: 'not_linux' };
  const procRoot = opts.procRoot ?? '/proc';

  const tables = await Promise.all([readNetTable(path.join(procRoot, 'net', 'tcp')), readNetTable(path.join(procRoot, 'net', 'tcp6'))]);
  const inodes = new Set<string>();
  for (const t of tables) for (const inode of listeningInodes(t.text, port)) inodes.add(inode);
  if (inodes.size === 0) return { unknown: tables.some((t) => t.unreadable) ? 'no_access' : 'no_listener' };

  const scan = await scanProcesses(procRoot, new Set([...inodes].map((i) => `socket:[${i}]`)));
  if (scan.holders.length === 0) return { unknown: scan.incomplete ? 'no_access' : 'no_listener' };

  const tree = await processTree(procRoot, scan.pids, scan.holders);
  const indexOfUuid = new Map<string, number>();
  for (const g of opts.gpus) if (g.uuid) indexOfUuid.set(normalUuid(g.uuid), g.index);
  const found = new Set<number>();
  for (const app of opts.computeApps) {
    if (!tree.has(app.pid) || !app.gpuUuid) continue;
    const index = indexOfUuid.get(normalUuid(app.gpuUuid));
    if (index !== undefined) found.add(index);
  }
  if (found.size === 0) return { unknown: 'not_on_gpu' };
  return { gpus: [...found].sort((a, b) => a - b) };
}

function normalUuid(uuid: string): string {
  return uuid.trim().toLowerCase();
}

/**
 * The inodes of the LISTEN sockets on `port` in a net/tcp or net/tcp6 table (proc(5)): after a header line,
 * one socket a line, `sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode …`,
 * the addresses as hex `IP:PORT`.
 */
export function listeningInodes(table: string, port: number): string[] {
  const out: string[] = [];
  for (const line of table.split('\n')) {
    const [sl, local, , st, , , , , , inode] = line.trim().split(/\s+/);
    if (!sl || !/^\d+:$/.test(sl) || !local || !st || !inode) continue; // the header, a blank or cut line
    const colon = local.lastIndexOf(':');
    if (colon < 0 || st.toUpperCase() !== TCP_LISTEN) continue;
    if (Number.parseInt(local.slice(colon + 1), 16) !== port) continue;
    if (/^\d+$/.test(inode) && inode !== '0') out.push(inode);
  }
  return out;
}

/** The parent pid in a /proc/<pid>/stat line: field 4, counted after the last ')' since field 2, `(comm)`, may hold spaces and parentheses. */
export function parentPidOfStat(stat: string): number | undefined {
  const close = stat.lastIndexOf(')');
  if (close < 0) return undefined;
  const rest = stat
    .slice(close + 1)
    .trim()
    .split(/\s+/); // state, ppid, …
  const ppid = Number(rest[1]);
  return Number.isInteger(ppid) && ppid >= 0 ? ppid : undefined;
}

interface NetTable {
  text: string;
  /** Present but not readable (ENOENT is not this: a kernel without IPv6 has no tcp6). */
  unreadable: boolean;
}

async function readNetTable(file: string): Promise<NetTable> {
  try {
    const { text, truncated } = await readCapped(file, MAX_NET_TABLE_BYTES);
    // A cut table ends mid-line: drop the part line.
    return { text: truncated ? text.slice(0, text.lastIndexOf('\n') + 1) : text, unreadable: false };
  } catch (e) {
    return { text: '', unreadable: errorCode(e) !== 'ENOENT' };
  }
}

interface ProcessScan {
  /** The pids looked at (at most MAX_PIDS). */
  pids: number[];
  /** The pids holding one of the sockets. */
  holders: number[];
  /** Some process could not be looked into (another user's), or the bounds cut the scan short. */
  incomplete: boolean;
}

/** The processes holding any of `targets` (`socket:[inode]`) among their open files. */
async function scanProcesses(procRoot: string, targets: ReadonlySet<string>): Promise<ProcessScan> {
  const { pids, truncated } = await listPids(procRoot);
  const holders: number[] = [];
  let incomplete = truncated;
  await forEachLimited(pids, CONCURRENCY, async (pid) => {
    const r = await holdsSocket(path.join(procRoot, String(pid), 'fd'), targets);
    if (r === 'holds') holders.push(pid);
    else if (r === 'unreadable' || r === 'cut') incomplete = true;
  });
  return { pids, holders: holders.sort((a, b) => a - b), incomplete };
}

/** The numeric entries of procRoot, at most MAX_PIDS of them. */
async function listPids(procRoot: string): Promise<{ pids: number[]; truncated: boolean }> {
  const pids: number[] = [];
  let dir: fs.Dir;
  try {
    dir = await fs.promises.opendir(procRoot);
  } catch {
    return { pids, truncated: true }; // proc itself not readable: nothing can be said about its processes
  }
  // Breaking out of the loop closes the directory.
  for await (const entry of dir) {
    if (!/^\d+$/.test(entry.name)) continue;
    if (pids.length >= MAX_PIDS) return { pids, truncated: true };
    pids.push(Number(entry.name));
  }
  return { pids, truncated: false };
}

type HoldResult = 'holds' | 'not' | 'gone' | 'unreadable' | 'cut';

/** Whether a process's fd folder holds one of `targets`: each fd is a symlink reading `socket:[inode]`, `/dev/null`, a path… */
async function holdsSocket(fdDir: string, targets: ReadonlySet<string>): Promise<HoldResult> {
  let dir: fs.Dir;
  try {
    dir = await fs.promises.opendir(fdDir);
  } catch (e) {
    return classify(e);
  }
  let seen = 0;
  try {
    for await (const entry of dir) {
      if (seen++ >= MAX_FDS_PER_PID) return 'cut';
      let target: string;
      try {
        target = await fs.promises.readlink(path.join(fdDir, entry.name));
      } catch (e) {
        const c = classify(e);
        if (c === 'unreadable') return c;
        continue; // that fd was closed meanwhile (or the process ended: the rest fail the same way)
      }
      if (targets.has(target)) return 'holds';
    }
  } catch (e) {
    return classify(e); // the process ended while its fds were listed
  }
  return 'not';
}

/** A vanished process (or fd) is normal mid-scan; permission refused is "unreadable"; anything else counts as unreadable too. */
function classify(e: unknown): 'gone' | 'unreadable' {
  const code = errorCode(e);
  return code === 'ENOENT' || code === 'ESRCH' ? 'gone' : 'unreadable';
}

/** The holders and all their descendants (by the parent pid in each process's stat). */
async function processTree(procRoot: string, pids: number[], roots: number[]): Promise<Set<number>> {
  const children = new Map<number, number[]>();
  await forEachLimited(pids, CONCURRENCY, async (pid) => {
    let stat: string;
    try {
      stat = (await readCapped(path.join(procRoot, String(pid), 'stat'), MAX_STAT_BYTES)).text;
    } catch {
      return; // vanished or not readable: not part of the tree as far as we can say
    }
    const ppid = parentPidOfStat(stat);
    if (ppid === undefined || ppid === pid) return;
    const list = children.get(ppid);
    if (list) list.push(pid);
    else children.set(ppid, [pid]);
  });
  const tree = new Set<number>();
  const todo = [...roots];
  while (todo.length > 0) {
    const pid = todo.pop() as number;
    if (tree.has(pid)) continue;
    tree.add(pid);
    for (const child of children.get(pid) ?? []) todo.push(child);
  }
  return tree;
}

/** Reads at most `maxBytes` of a file. /proc files report size 0, so it reads until end of file or the cap. */
async function readCapped(file: string, maxBytes: number): Promise<{ text: string; truncated: boolean }> {
  const fh = await fs.promises.open(file, 'r');
  try {
    const chunks: Buffer[] = [];
    let total = 0;
    while (total < maxBytes) {
      const buf = Buffer.alloc(Math.min(64 * 1024, maxBytes - total));
      const { bytesRead } = await fh.read(buf, 0, buf.length, null);
      if (bytesRead === 0) return { text: Buffer.concat(chunks, total).toString('utf8'), truncated: false };
      chunks.push(buf.subarray(0, bytesRead));
      total += bytesRead;
    }
    // At the cap: there is more only if one more byte can be read.
    const { bytesRead } = await fh.read(Buffer.alloc(1), 0, 1, null);
    return { text: Buffer.concat(chunks, total).toString('utf8'), truncated: bytesRead > 0 };
  } finally {
    await fh.close();
  }
}

async function forEachLimited<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await fn(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

function errorCode(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException | undefined)?.code;
}
