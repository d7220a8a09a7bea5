// The machine and the versions the figures were taken with, printed and saved beside them.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from './child';

export interface Machine {
  os: string;
  kernel: string;
  cpu: string;
  cores: number;
  ramGb: number;
  node: string;
  v8: string;
  versions: Record<string, string>;
  date: string;
  commit: string;
}

const PACKAGES = ['ws', 'eventsource-parser', 'better-sqlite3', 'zod', 'tsx', 'esbuild', 'systeminformation', 'pino', 'typescript'];

function version(pkg: string): string {
  try {
    return (JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'not installed';
  }
}

function osName(): string {
  try {
    const m = /^PRETTY_NAME="?([^"\n]+)"?/m.exec(fs.readFileSync('/etc/os-release', 'utf8'));
    if (m?.[1]) return m[1];
  } catch {
    // not Linux, or no os-release
  }
  return `${os.type()} ${os.release()}`;
}

function commit(): string {
  try {
    const head = fs.readFileSync(path.join(ROOT, '.git', 'HEAD'), 'utf8').trim();
    if (!head.startsWith('ref: ')) return head.slice(0, 12);
    return fs
      .readFileSync(path.join(ROOT, '.git', head.slice(5)), 'utf8')
      .trim()
      .slice(0, 12);
  } catch {
    return 'unknown';
  }
}

export function machine(): Machine {
  const app = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string };
  return {
    os: osName(),
    kernel: `${os.type()} ${os.release()} ${os.arch()}`,
    cpu: os.cpus()[0]?.model.trim() ?? 'unknown',
    cores: os.availableParallelism(),
    ramGb: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    node: process.version,
    v8: process.versions.v8,
    versions: { [app.name]: app.version, ...Object.fromEntries(PACKAGES.map((p) => [p, version(p)])) },
    date: new Date().toISOString(),
    commit: commit(),
  };
}

export function machineLines(m: Machine): string[] {
  return [
    `machine: ${m.os} (${m.kernel}); ${m.cpu}, ${m.cores} cores, ${m.ramGb} GB RAM`,
    `versions: node ${m.node} (V8 ${m.v8}); ${Object.entries(m.versions)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
    `commit ${m.commit}, ${m.date}`,
  ];
}
