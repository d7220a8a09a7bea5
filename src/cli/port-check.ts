// Before the agent starts anything: is each address it will listen on free? A busy port becomes one
// line that says which address, what uses it and the flag or setting that picks another.
import net from 'node:net';

export interface ListenTarget {
  /** What listens there, as the owner knows it ("console", "local gateway"). */
  what: string;
  host: string;
  port: number;
  /** How to pick another address, shown after the problem. */
  fix: (nextPort: number) => string;
}

/** Why `host:port` cannot be listened on (its errno code), or undefined when it can. */
export function listenProblem(host: string, port: number): Promise<string | undefined> {
  if (port === 0) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
    srv.listen({ host, port, exclusive: true }, () => srv.close(() => resolve(undefined)));
  });
}

/** One line for a refused listen: which address, why, and how to pick another. */
export function explainListen(t: ListenTarget, code: string): string {
  const at = `${t.host.includes(':') ? `[${t.host}]` : t.host}:${t.port}`;
  const next = t.port < 65535 ? t.port + 1 : 1024;
  if (code === 'EADDRINUSE') return `The ${t.what} address ${at} is already in use (another swan-provider, or another program, listens there). ${t.fix(next)}`;
  if (code === 'EACCES')
    return `The ${t.what} address ${at} needs more privileges than this user has (ports below 1024 do). ${t.fix(next < 1024 ? 7777 : next)}`;
  if (code === 'EADDRNOTAVAIL')
    return `The ${t.what} address ${at} is not an address of this machine. ${t.fix(next).replace(/\d+\.\d+\.\d+\.\d+|\[[^\]]+\]|localhost/, '127.0.0.1')}`;
  return `The ${t.what} address ${at} cannot be used (${code}). ${t.fix(next)}`;
}

/** The first problem among the targets, as the one line to print, or undefined when all are free. */
export async function firstListenProblem(targets: ListenTarget[]): Promise<string | undefined> {
  for (const t of targets) {
    const code = await listenProblem(t.host, t.port);
    if (code) return explainListen(t, code);
  }
  return undefined;
}

/** The fix line for the console address (also where /metrics is served). */
export function consoleFix(host: string): (next: number) => string {
  return (next) => `Start with another one: --console ${host.includes(':') ? `[${host}]` : host}:${next}`;
}
