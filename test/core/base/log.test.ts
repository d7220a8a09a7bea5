// AgentLog: secrets redacted in messages (ring, events, file, console), the ring bounded, the level filter,
// and JSON lines written to the log file.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AgentLog, memoryLog, redact } from '../../../src/core/base/log';
import type { LogEntry } from '../../../src/shared/types';

let dir: string | undefined;
afterEach(() => {
  vi.restoreAllMocks();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** Polls until the file holds `n` lines (pino writes asynchronously); fails after the deadline. */
async function lines(file: string, n: number, timeoutMs = 3000): Promise<Array<Record<string, unknown>>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
    const got = text.split('\n').filter((l) => l.trim() !== '');
    if (got.length >= n) return got.map((l) => JSON.parse(l) as Record<string, unknown>);
    if (Date.now() > deadline) throw new Error(`${file} has ${got.length} lines, expected ${n}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('redact', () => {
  it.each([
    ['key sk-prov-test-1234567890 rejected', 'key sk-prov-t… rejected', 'sk-prov-test-1234567890'],
    ['Authorization: Bearer abc.def-ghi', 'Authorization: Bearer …', 'abc.def-ghi'],
    ['authorization: bearer abc123xyz', 'authorization: bearer …', 'abc123xyz'],
    ['{"auth":"Bearer tok_456789"}', '{"auth":"Bearer …"}', 'tok_456789'],
    ['ws://h/v1/ws?apiKey=sk-swan-AbCdEf_-123456', 'ws://h/v1/ws?apiKey=sk-swan-A…', 'AbCdEf_-123456'],
  ])('%j', (input, expected, secret) => {
    expect(redact(input)).toBe(expected);
    expect(redact(input)).not.toContain(secret);
  });

  it('leaves ordinary text alone', () => {
    expect(redact('engine http://127.0.0.1:8000 is healthy; task-1234 done')).toBe('engine http://127.0.0.1:8000 is healthy; task-1234 done');
  });
});

describe('AgentLog', () => {
  it('redacts secrets in what the ring keeps and in the entry events', () => {
    const log = memoryLog();
    const seen: LogEntry[] = [];
    log.on('entry', (e) => seen.push(e));
    log.child('hub').warn('hub refused key sk-prov-verysecret-0001 (Bearer sk-prov-verysecret-0001)');
    const [entry] = log.entries();
    expect(entry!.msg).not.toContain('verysecret-0001');
    expect(entry!.msg).toContain('sk-prov-v…');
    expect(seen).toEqual([entry]);
    expect(entry).toMatchObject({ level: 'warn', subsystem: 'hub', ts: expect.any(Number) });
  });

  it('child loggers name their subsystem path; a requestId field lands on the entry', () => {
    const log = memoryLog();
    const l = log.child('gateway').child('stream');
    l.info('started', { requestId: 'r-1', other: 5 });
    l.debug('no id', { requestId: 42 });
    expect(log.entries()).toEqual([
      { ts: expect.any(Number), level: 'info', subsystem: 'gateway.stream', msg: 'started', requestId: 'r-1' },
      { ts: expect.any(Number), level: 'debug', subsystem: 'gateway.stream', msg: 'no id' },
    ]);
  });

  it('the ring keeps the newest ringSize entries', () => {
    const log = new AgentLog({ ringSize: 5, console: false });
    for (let i = 0; i < 12; i++) log.child('t').info(`m${i}`);
    expect(log.entries().map((e) => e.msg)).toEqual(['m7', 'm8', 'm9', 'm10', 'm11']);
  });

  it('entries() filters by minimum level and limits to the newest', () => {
    const log = memoryLog();
    const l = log.child('t');
    l.debug('d1');
    l.info('i1');
    l.warn('w1');
    l.error('e1');
    l.info('i2');
    expect(log.entries(500, 'warn').map((e) => e.msg)).toEqual(['w1', 'e1']);
    expect(log.entries(500, 'info').map((e) => e.msg)).toEqual(['i1', 'w1', 'e1', 'i2']);
    expect(log.entries(2).map((e) => e.msg)).toEqual(['e1', 'i2']);
    expect(log.entries(1, 'error').map((e) => e.msg)).toEqual(['e1']);
    expect(log.entries().map((e) => e.msg)).toEqual(['d1', 'i1', 'w1', 'e1', 'i2']);
  });

  it('writes JSON lines to the file (folder created), redacted, secret fields censored', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-log-'));
    const file = path.join(dir, 'logs', 'agent.jsonl');
    const log = new AgentLog({ file, console: false });
    const l = log.child('requests');
    l.info('served r1 with Bearer sk-prov-secret-777777', {
      requestId: 'r1',
      tokens: 42,
      token: 'sk-prov-secret-777777',
      apiKey: 'k-123',
      headers: { authorization: 'Bearer zzz' },
    });
    l.debug('debug goes to the file too');
    l.error('boom');
    log.flush();
    const got = await lines(file, 3);
    expect(got[0]).toMatchObject({
      level: 30,
      subsystem: 'requests',
      requestId: 'r1',
      tokens: 42,
      msg: 'served r1 with Bearer …',
      token: '[redacted]',
      apiKey: '[redacted]',
      headers: { authorization: '[redacted]' },
    });
    expect(typeof got[0]!.time).toBe('number');
    expect(got[1]).toMatchObject({ level: 20, msg: 'debug goes to the file too' });
    expect(got[2]).toMatchObject({ level: 50, msg: 'boom' });
    expect(fs.readFileSync(file, 'utf8')).not.toContain('secret-777777');
  });

  it('censors a secret field whichever way it comes: alone, nested, or beside plain fields, in line order', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-log-'));
    const file = path.join(dir, 'agent.jsonl');
    const log = new AgentLog({ file, console: false });
    const l = log.child('requests');
    l.info('plain', { requestId: 'r1', tokens: 3 });
    l.info('top', { key: 'k-top-123456' });
    l.info('nested', { requestId: 'r2', engine: { apiKey: 'k-nested-123456' } });
    l.info('plain again', { requestId: 'r3' });
    log.flush();
    const got = await lines(file, 4);
    expect(got.map((g) => g.msg)).toEqual(['plain', 'top', 'nested', 'plain again']);
    expect(got[0]).toMatchObject({ subsystem: 'requests', requestId: 'r1', tokens: 3 });
    expect(got[1]).toMatchObject({ key: '[redacted]' });
    expect(got[2]).toMatchObject({ requestId: 'r2', engine: { apiKey: '[redacted]' } });
    expect(fs.readFileSync(file, 'utf8')).not.toMatch(/k-top|k-nested/);
  });

  it('appends to an existing log file', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-log-'));
    const file = path.join(dir, 'agent.jsonl');
    fs.writeFileSync(file, `${JSON.stringify({ msg: 'older run' })}\n`);
    const log = new AgentLog({ file, console: false });
    log.child('x').info('newer run');
    log.flush();
    expect((await lines(file, 2)).map((l) => l.msg)).toEqual(['older run', 'newer run']);
  });

  it('prints readable lines at the console level and above, redacted', () => {
    const printed: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      printed.push(String(chunk));
      return true;
    });
    const log = new AgentLog({ console: 'info' });
    log.child('hub').debug('hidden');
    log.child('hub').info('connected with sk-prov-abcdefghijk');
    log.child('engine').error('down');
    vi.restoreAllMocks();
    expect(printed).toHaveLength(2);
    expect(printed[0]).toMatch(/^\d\d:\d\d:\d\d INFO {2}\[hub\] connected with sk-prov-a…\n$/);
    expect(printed[1]).toMatch(/^\d\d:\d\d:\d\d ERROR \[engine\] down\n$/);
  });

  it('prints nothing by default', () => {
    const spy = vi.spyOn(process.stderr, 'write');
    new AgentLog().child('x').error('quiet');
    expect(spy).not.toHaveBeenCalled();
  });
});

describe('AgentLog file rolled by size (pino-roll)', () => {
  /** The numbered files in `d`, oldest first. */
  const rolled = (d: string): string[] =>
    fs
      .readdirSync(d)
      .filter((f) => /^agent\.\d+\.jsonl$/.test(f))
      .sort((a, b) => Number(a.split('.')[1]) - Number(b.split('.')[1]));

  it('rolls past the size, keeps the newest files only, and agent.jsonl links to the one in use', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-log-'));
    const file = path.join(dir, 'logs', 'agent.jsonl');
    const log = new AgentLog({ file, console: false, maxFileBytes: 2_000, keepFiles: 2 });
    const l = log.child('roll');
    for (let i = 0; i < 120; i++) {
      l.info(`line ${i} ${'x'.repeat(60)}`);
      if (i % 10 === 9) await log.flush(); // each roll happens between writes, as under real traffic
    }
    await log.flush();
    const logs = path.dirname(file);
    const deadline = Date.now() + 5_000;
    while (rolled(logs).length > 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20)); // removal runs after the roll
    const files = rolled(logs);
    expect(files.length).toBeGreaterThanOrEqual(2);
    expect(files.length).toBeLessThanOrEqual(3); // the one in use + keepFiles
    expect(Number(files[0]!.split('.')[1])).toBeGreaterThan(1); // the first ones were removed
    // A file is rolled once a write takes it past the size: it passes the size by at most one write (10 lines here).
    for (const f of files) expect(fs.statSync(path.join(logs, f)).size).toBeLessThan(2_000 + 10 * 120);
    expect(fs.lstatSync(file).isSymbolicLink()).toBe(true);
    expect(fs.readlinkSync(file)).toBe(files[files.length - 1]);
    const last = await lines(file, 1);
    expect(last[last.length - 1]!.msg).toMatch(/^line 119 /);
    expect(log.fileProblem()).toBeNull();
    await log.close();
  });

  it('a log file of an older version is continued as the first numbered file', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-log-'));
    const file = path.join(dir, 'agent.jsonl');
    fs.writeFileSync(file, `${JSON.stringify({ msg: 'older run' })}\n`);
    const log = new AgentLog({ file, console: false });
    log.child('x').info('newer run');
    await log.flush();
    expect(fs.readlinkSync(file)).toBe('agent.1.jsonl');
    expect((await lines(path.join(dir, 'agent.1.jsonl'), 2)).map((l) => l.msg)).toEqual(['older run', 'newer run']);
    await log.close();
  });
});
