// A listener's own budget of connections, so a flood at one port cannot take what the rest of the process
// needs: the hub link, the engines, the ledger and the console each need file descriptors too. Without it,
// 20,000 half-sent requests at the gateway used every descriptor of the process: hub requests failed with
// EMFILE, the console stopped answering, engines were marked degraded. Applied to a node:http server:
// - at most `total` connections at once (below the process's file limit), via server.maxConnections, which
//   closes the excess before any JavaScript object is made for it;
// - at most `perAddress` from one address (a LAN host cannot take the whole budget);
// - headers within `headersTimeoutMs` and the whole request within `requestTimeoutMs` (a half-sent request
//   holds its slot that long at most), checked every second.
import fs from 'node:fs';
import type http from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../base/log';

/** The process's soft limit on open files (Linux: /proc/self/limits), or undefined where unknown. */
export function openFileLimit(): number | undefined {
  try {
    const line = fs
      .readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const soft = line ? Number(/^Max open files\s+(\d+|unlimited)/.exec(line)?.[1]) : NaN;
    return Number.isFinite(soft) && soft > 0 ? soft : undefined;
  } catch {
    return undefined;
  }
}

/** A quarter of the file limit, between 64 and `ceiling`: the rest stays for everything else. */
export function defaultConnectionCap(ceiling: number, limit = openFileLimit() ?? 1024): number {
  return Math.max(64, Math.min(ceiling, Math.floor(limit / 4)));
}

export interface ConnectionBudget {
  total: number;
  perAddress: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
}

/** Options for http.createServer that bound how long a request may take to arrive (checked every second). */
export function requestDeadlines(b: Pick<ConnectionBudget, 'headersTimeoutMs' | 'requestTimeoutMs'>): http.ServerOptions {
  return { headersTimeout: b.headersTimeoutMs, requestTimeout: b.requestTimeoutMs, connectionsCheckingInterval: 1000 };
}

/** Caps `server`'s connections (total and per address); says so in the log at most once a minute. Returns how many were refused so far. */
export function limitConnections(server: http.Server, b: ConnectionBudget, log: Logger, what: string): { refused: () => number; open: () => number } {
  server.maxConnections = b.total;
  const perAddress = new Map<string, number>();
  let open = 0;
  let refused = 0;
  let warnedAt = 0;
  const warn = (why: string) => {
    refused++;
    const now = Date.now();
    if (now - warnedAt < 60_000) return;
    warnedAt = now;
    log.warn(`${what}: ${why}; refusing new connections (${refused} so far). The rest of the agent is not affected.`, { code: 'connection_limit' });
  };
  server.on('drop', () => warn(`${b.total} connections are open, the most it takes`));
  server.on('connection', (socket: Socket) => {
    const addr = socket.remoteAddress ?? '';
    const n = perAddress.get(addr) ?? 0;
    if (n >= b.perAddress) {
      warn(`${addr} has ${n} connections open, the most one address may`);
      socket.destroy();
      return;
    }
    open++;
    perAddress.set(addr, n + 1);
    socket.once('close', () => {
      open--;
      const left = (perAddress.get(addr) ?? 1) - 1;
      if (left <= 0) perAddress.delete(addr);
      else perAddress.set(addr, left);
    });
  });
  return { refused: () => refused, open: () => open };
}
