// The process-level handler: an exception nothing caught and a rejection nobody handled are logged, and
// the process keeps serving. Run in a child process (the test runner has handlers of its own).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../support/traces';
import { tempHome } from '../../support/stack';

function run(guarded: boolean): Promise<{ code: number | null; out: string }> {
  const dir = tempHome('swan-guard-');
  const script = path.join(dir, 'guarded.ts');
  fs.writeFileSync(
    script,
    `import { memoryLog } from ${JSON.stringify(path.join(repoRoot, 'src/core/base/log.ts'))};
import { installProcessGuard } from ${JSON.stringify(path.join(repoRoot, 'src/core/base/process-guard.ts'))};
const log = memoryLog();
${guarded ? "const guard = installProcessGuard(log.child('process'));" : 'const guard = { caught: 0, dispose() {} };'}
setTimeout(() => { throw new RangeError('Maximum call stack size exceeded'); }, 10);
setTimeout(() => { void Promise.reject(new Error('nobody listens')); }, 20);
setTimeout(() => {
  const lines = log.entries(100).filter((e) => e.level === 'error').map((e) => e.msg);
  process.stdout.write(JSON.stringify({ caught: guard.caught, lines }) + '\\n');
  guard.dispose();
}, 100);
`,
  );
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => {
      fs.rmSync(dir, { recursive: true, force: true });
      resolve({ code, out });
    });
  });
}

describe('installProcessGuard', () => {
  it('logs an uncaught exception and an unhandled rejection and keeps the process running', async () => {
    const r = await run(true);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.out.trim().split('\n').at(-1)!) as { caught: number; lines: string[] };
    expect(report.caught).toBe(2);
    expect(report.lines.join('\n')).toMatch(/uncaught exception: Maximum call stack/);
    expect(report.lines.join('\n')).toMatch(/unhandled promise rejection: nobody listens/);
  });

  it('without it, the same exception stops the process (what the guard is for)', async () => {
    const r = await run(false);
    expect(r.code).not.toBe(0);
    expect(r.out).not.toContain('"caught"');
  });
});
