// config.toml edited while the agent runs (issue 43): a broken edit is refused with the file and the line
// and the settings in use stay; a valid edit applies what can apply live (the node name here) and names
// what needs a restart (Agent.MaxQueuePerModel here). Before, neither was noticed until the next start.
import fs from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startStack, type Stack } from '../support/stack';

let stack: Stack | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await stack?.close();
  stack = undefined;
});

interface Line {
  level: string;
  fields?: Record<string, unknown>;
}

/** The log's own writes, kept, and a wait for the first with a given `code` field (resolved as it is written). */
class Written {
  readonly lines: Line[] = [];
  private waiters: Array<{ code: string; resolve: (l: Line) => void }> = [];
  push(line: Line): void {
    this.lines.push(line);
    for (const w of this.waiters.filter((w) => w.code === line.fields?.code)) w.resolve(line);
    this.waiters = this.waiters.filter((w) => w.code !== line.fields?.code);
  }
  next(code: string, timeoutMs = 15_000): Promise<Line> {
    const seen = this.lines.find((l) => l.fields?.code === code);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no log line with code ${code}`)), timeoutMs); // an upper bound only
      this.waiters.push({ code, resolve: (l) => (clearTimeout(t), resolve(l)) });
    });
  }
  clear(): void {
    this.lines.length = 0;
  }
}

describe('config.toml edited while running', () => {
  it('a broken edit is refused with file:line and the running settings stay; a valid one applies live and names what needs a restart', async () => {
    stack = await startStack();
    const s = stack;
    const written = new Written();
    const write = s.log.write.bind(s.log);
    vi.spyOn(s.log, 'write').mockImplementation((level, subsystem, msg, fields) => {
      written.push({ level, ...(fields ? { fields } : {}) });
      write(level, subsystem, msg, fields);
    });
    const file = `${s.home}/config.toml`;
    const good = fs.readFileSync(file, 'utf8');
    expect(s.agent.snapshot().nodeName).toBe('test-node');

    // Broken: a value of the wrong type, on a line we know.
    const broken = good.replace('[Agent]\n', '[Agent]\nMaxQueuePerModel = "lots"\n');
    const badLine = broken.split('\n').findIndex((l) => l.startsWith('MaxQueuePerModel')) + 1;
    fs.writeFileSync(file, broken);
    const refused = await written.next('config_refused');
    expect(refused.level).toBe('error');
    expect(refused.fields).toMatchObject({ file, line: badLine, setting: 'Agent.MaxQueuePerModel' });
    expect(s.agent.snapshot().nodeName).toBe('test-node');

    // Valid: the node name (live) and the queue limit (taken at start: restart needed).
    written.clear();
    fs.writeFileSync(file, good.replace('NodeName = "test-node"', 'NodeName = "renamed-node"').replace('[Agent]\n', '[Agent]\nMaxQueuePerModel = 7\n'));
    const applied = await written.next('config_applied');
    expect(applied.fields?.settings).toEqual(['API.NodeName']);
    const restart = await written.next('config_restart_needed');
    expect(restart.level).toBe('warn');
    expect(restart.fields?.settings).toEqual(['Agent.MaxQueuePerModel']);
    expect(s.agent.snapshot().nodeName).toBe('renamed-node');
    expect(written.lines.some((w) => w.fields?.code === 'config_refused')).toBe(false);
  }, 60_000);
});
