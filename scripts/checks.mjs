#!/usr/bin/env node
// The static checks of `npm test`, at the same time: the two typecheck configs, ESLint and Prettier are each one
// single-threaded process, so on a 2-core machine running them together takes about half as long as one
// after the other. Each one's output is printed whole when it ends; any failure fails the run.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = (pkg, file) => path.join(root, 'node_modules', pkg, 'bin', file);
const CHECKS = [
  { name: 'typecheck (node)', args: [bin('typescript', 'tsc'), '-p', 'tsconfig.node.json', '--noEmit'] },
  { name: 'typecheck (web)', args: [bin('typescript', 'tsc'), '-p', 'tsconfig.web.json', '--noEmit'] },
  { name: 'lint', args: [bin('eslint', 'eslint.js'), '.'] },
  { name: 'format', args: [bin('prettier', 'prettier.cjs'), '--check', '.', '--log-level', 'warn'] },
];

function run({ name, args }) {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', (e) => resolve({ name, ok: false, out: e.message }));
    child.on('close', (code) => {
      const secs = ((Date.now() - started) / 1000).toFixed(1);
      process.stdout.write(`== ${name}: ${code === 0 ? 'ok' : `failed (exit ${code})`} in ${secs} s\n${out}`);
      resolve({ name, ok: code === 0 });
    });
  });
}

const results = await Promise.all(CHECKS.map(run));
const failed = results.filter((r) => !r.ok).map((r) => r.name);
if (failed.length) {
  process.stderr.write(`Failed: ${failed.join(', ')}\n`);
  process.exit(1);
}
