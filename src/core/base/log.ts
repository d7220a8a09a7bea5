// Logging: pino JSON lines to a file in the home folder, one readable line per event on the
// console (for `swan-provider run`), and a bounded in-memory ring the console UI reads.
// Secrets are redacted everywhere: by pattern (sk-… keys, Bearer values, user:pass@ in URLs) and by
// value — the configured secrets themselves (provider key in any format, engine api_keys, gateway keys)
// are handed to the AgentLog with addSecrets() and replaced wherever they appear.
import { EventEmitter } from 'node:events';
import { pino, type Logger as PinoLogger } from 'pino';
import type { LogEntry } from '../../shared/types';
import { forTerminalLine } from './terminal';
import { Ring } from '../../shared/ring';
import { LogFile, type LogFileProblem } from './log-file';

export type { LogFileProblem } from './log-file';

export type Level = LogEntry['level'];

export interface LogSink {
  entries(limit?: number, minLevel?: Level): LogEntry[];
  on(event: 'entry', cb: (e: LogEntry) => void): unknown;
  off(event: 'entry', cb: (e: LogEntry) => void): unknown;
}

const LEVELS: Record<Level, number> = { debug: 20, info: 30, warn: 40, error: 50 };
// The auth scheme is case-insensitive on the wire ("bearer x" is as secret as "Bearer x").
const SECRET = /(sk-[A-Za-z0-9_-]{6})[A-Za-z0-9_-]+|(Bearer\s+)[^\s"']+|(\/\/)[^\s/@:"']+:[^\s/@"']*@/gi;
/** Shorter values are not treated as secrets (they would shred ordinary words). */
const MIN_SECRET_LENGTH = 6;
const REDACTED = '[redacted]';
/** Field paths pino censors in the file (on top of the message's redaction). */
const REDACT_PATHS = ['token', 'apiKey', 'key', '*.token', '*.apiKey', 'headers.authorization'];
/** The top-level keys among REDACT_PATHS (the nested ones need an object value, checked below). */
const REDACTED_KEYS = new Set(REDACT_PATHS.filter((p) => !p.includes('.')));

/** Whether any of REDACT_PATHS can match: a top-level key of that name, or any object value (nested paths). */
function needsPathRedaction(fields: Record<string, unknown>): boolean {
  for (const k in fields) {
    if (REDACTED_KEYS.has(k)) return true;
    const v = fields[k];
    if (typeof v === 'object' && v !== null) return true;
  }
  return false;
}

export function redact(text: string): string {
  return text.replace(SECRET, (_m, sk: string | undefined, bearer: string | undefined, slashes: string | undefined) =>
    sk ? `${sk}…` : bearer ? `${bearer}…` : `${slashes}${REDACTED}@`,
  );
}

export interface LogOptions {
  /** JSON log file (created with its folder; rolled by size, log-file.ts). Omit for no file. */
  file?: string;
  /** A log file is rolled past this size (default 20 MB). */
  maxFileBytes?: number;
  /** Rolled files kept besides the one in use (default 4). */
  keepFiles?: number;
  /** Print readable lines to stderr at this level and above; false for none. */
  console?: Level | false;
  /** Entries kept for the UI. */
  ringSize?: number;
}

/**
 * The agent's one log: the file, the terminal and the console's ring. Made once by whatever hosts the agent (the
 * CLI, the desktop main process) and handed to the features, which give each of their parts a `Logger` from
 * `child()` and add the secrets to redact.
 */
export class AgentLog extends EventEmitter implements LogSink {
  private readonly ring: Ring<LogEntry>;
  private readonly logFile?: LogFile;
  private readonly file?: PinoLogger;
  /** The same file without pino's path redaction, for fields none of REDACT_PATHS can match (most lines). */
  private readonly plainFile?: PinoLogger;
  private readonly consoleLevel: number;
  /** Configured secret values, longest first (so a key containing another is replaced whole). */
  private secrets: string[] = [];

  constructor(opts: LogOptions = {}) {
    super();
    this.ring = new Ring(opts.ringSize ?? 2000);
    this.consoleLevel = opts.console === false || opts.console === undefined ? Infinity : LEVELS[opts.console];
    if (opts.file) {
      // Not pino.destination(): its exit hook's flushSync retries a failed write for ever (a full disk hung
      // every stop). The log file has an error listener, a bounded buffer and a flush with a deadline.
      const dest = (this.logFile = new LogFile({
        file: opts.file,
        ...(opts.maxFileBytes !== undefined ? { maxBytes: opts.maxFileBytes } : {}),
        ...(opts.keepFiles !== undefined ? { keep: opts.keepFiles } : {}),
        onProblem: (problem, dropped) => this.fileProblemChanged(problem, dropped),
      }));
      this.file = pino({ level: 'debug', base: undefined, redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, dest);
      this.plainFile = pino({ level: 'debug', base: undefined }, dest);
    }
  }

  /** Values to redact wherever they appear from now on (provider key, engine api_keys, gateway keys). */
  addSecrets(values: Iterable<string | undefined>): void {
    const fresh = [...values].filter((v): v is string => !!v && v.length >= MIN_SECRET_LENGTH && !this.secrets.includes(v));
    if (fresh.length === 0) return;
    this.secrets = [...new Set([...this.secrets, ...fresh])].sort((a, b) => b.length - a.length);
  }

  /** `text` with every known secret value and secret-shaped pattern replaced. */
  redactText(text: string): string {
    let out = text;
    for (const s of this.secrets) if (out.includes(s)) out = out.split(s).join(REDACTED);
    return redact(out);
  }

  child(subsystem: string): Logger {
    return new Logger(this, subsystem);
  }

  write(level: Level, subsystem: string, msg: string, fields?: Record<string, unknown>): void {
    const clean = this.redactText(msg);
    if (fields && this.secrets.length) {
      const f: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(fields)) f[k] = typeof v === 'string' ? this.redactText(v) : v;
      fields = f;
    }
    const requestId = typeof fields?.requestId === 'string' ? fields.requestId : undefined;
    const entry: LogEntry = { ts: Date.now(), level, subsystem, msg: clean, ...(requestId ? { requestId } : {}) };
    this.ring.push(entry);
    (fields && needsPathRedaction(fields) ? this.file : this.plainFile)?.[level]({ subsystem, ...fields }, clean);
    if (LEVELS[level] >= this.consoleLevel) {
      const time = new Date(entry.ts).toISOString().slice(11, 19);
      // One entry, one line: a line break from outside is shown, never printed (it could forge a console link).
      process.stderr.write(forTerminalLine(`${time} ${level.toUpperCase().padEnd(5)} [${subsystem}] ${clean}`) + '\n');
    }
    this.emit('entry', entry);
  }

  entries(limit = 500, minLevel: Level = 'debug'): LogEntry[] {
    const min = LEVELS[minLevel];
    const out = this.ring.toArray().filter((e) => LEVELS[e.level] >= min);
    return out.slice(Math.max(0, out.length - limit));
  }

  /** Resolves once the file has what was written, or at the deadline (at once while it cannot be written). */
  flush(deadlineMs?: number): Promise<void> {
    return this.logFile?.flush(deadlineMs) ?? Promise.resolve();
  }

  /** Flushes with the deadline and closes the file (the ring and the terminal lines go on). */
  close(deadlineMs?: number): Promise<void> {
    return this.logFile?.close(deadlineMs) ?? Promise.resolve();
  }

  /** Why the log file is not being written now (full or read-only disk), or null. */
  fileProblem(): LogFileProblem | null {
    return this.logFile?.problem() ?? null;
  }

  /** Said once per change, in the ring and on the terminal (the file is what failed); 'file' tells the snapshot. */
  private fileProblemChanged(problem: LogFileProblem | null, dropped: number): void {
    const lost = dropped > 0 ? ` ${dropped} lines could not be kept meanwhile.` : '';
    if (problem) {
      const what =
        problem.code === 'disk_full' ? 'the disk is full' : problem.code === 'disk_read_only' ? 'the disk is read-only' : `writing failed (${problem.detail})`;
      this.write(
        'error',
        'log',
        `The log file ${problem.file} cannot be written: ${what}. The agent keeps serving and keeps recent lines in memory; free some space (or make the disk writable) and it writes again by itself.`,
        { code: problem.code },
      );
    } else {
      this.write('info', 'log', `The log file is written again.${lost}`, { code: 'log_file_ok' });
    }
    this.emit('file', problem);
  }
}

/** What a part holds: a named handle on the agent's log (`subsystem` prefixes every line it writes). */
export class Logger {
  constructor(
    private readonly root: AgentLog,
    readonly subsystem: string,
  ) {}
  child(sub: string): Logger {
    return new Logger(this.root, `${this.subsystem}.${sub}`);
  }
  debug(msg: string, fields?: Record<string, unknown>): void {
    this.root.write('debug', this.subsystem, msg, fields);
  }
  info(msg: string, fields?: Record<string, unknown>): void {
    this.root.write('info', this.subsystem, msg, fields);
  }
  warn(msg: string, fields?: Record<string, unknown>): void {
    this.root.write('warn', this.subsystem, msg, fields);
  }
  error(msg: string, fields?: Record<string, unknown>): void {
    this.root.write('error', this.subsystem, msg, fields);
  }
}

/** A logger that keeps entries in memory only (tests, library use). */
export function memoryLog(): AgentLog {
  return new AgentLog({ console: false });
}
