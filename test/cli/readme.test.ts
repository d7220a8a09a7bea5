// The README's commands table, its quick start and the code say the same: every command and flag in the
// table exists in `swan-provider --help` (the commander program), and every command of the program is
// in the table.
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/main';
import { repoRoot } from '../support/traces';
import { runCli } from '../support/cli/cli';

const readme = fs.readFileSync(path.join(repoRoot, 'README.md'), 'utf8');

function leaves(c: Command, prefix: string[] = []): Array<{ path: string; cmd: Command }> {
  if (c.commands.length === 0) return [{ path: prefix.join(' '), cmd: c }];
  return c.commands.flatMap((sub) => leaves(sub, [...prefix, sub.name()]));
}

/** Each `swan-provider …` snippet in the first column of the commands table: its command path and flags. */
function tableEntries(): Array<{ path: string; flags: string[]; snippet: string }> {
  const section = readme.slice(readme.indexOf('## Commands'), readme.indexOf('## Configuration'));
  const rows = section.split('\n').filter((l) => l.startsWith('| `swan-provider'));
  expect(rows.length).toBeGreaterThan(5);
  const out: Array<{ path: string; flags: string[]; snippet: string }> = [];
  for (const row of rows) {
    const first = row.split(/(?<!\\)\|/)[1]!;
    let parent = '';
    for (const snippet of first.match(/`[^`]+`/g) ?? []) {
      const words = snippet
        .slice(1, -1)
        .replace(/^swan-provider /, '')
        .split(' ');
      const names = words.filter((w, i) => /^[a-z][a-z-]*$/.test(w) && words.slice(0, i).every((x) => /^[a-z][a-z-]*$/.test(x)));
      const full = snippet.includes('swan-provider') || names[0] === parent ? names : [parent, ...names].filter(Boolean);
      if (snippet.includes('swan-provider')) parent = names[0]!;
      out.push({ path: full.join(' '), flags: [...snippet.matchAll(/--[a-z][a-z-]*/g)].map((m) => m[0]), snippet });
    }
  }
  return out;
}

describe('README commands table', () => {
  const program = buildProgram();
  const commands = new Map(leaves(program).map((l) => [l.path, l.cmd]));
  const entries = tableEntries();

  it('every command and flag in the table exists in the program', () => {
    for (const e of entries) {
      // `usage [summary]`: the table may name a group whose default command runs.
      const cmd = commands.get(e.path) ?? commands.get(`${e.path} summary`);
      expect(cmd, `README names "${e.path}" (${e.snippet})`).toBeDefined();
      const known = new Set(cmd!.options.flatMap((o) => [o.long, o.negate ? o.long : undefined]).filter(Boolean) as string[]);
      for (const f of e.flags) expect(known.has(f), `${e.path} ${f} (README: ${e.snippet})`).toBe(true);
    }
  });

  it('every command of the program is in the table', () => {
    const named = new Set(entries.map((e) => e.path));
    for (const p of commands.keys()) expect(named.has(p) || named.has(p.replace(/ summary$/, '')), `README lacks "${p}"`).toBe(true);
  });

  it("the top-level --help lists exactly the table's commands", async () => {
    const r = await runCli(['--help']);
    expect(r.code).toBe(0);
    const listed = [...r.stdout.slice(r.stdout.indexOf('Commands:')).matchAll(/^ {2}([a-z-]+)/gm)].map((m) => m[1]).filter((c) => c !== 'help');
    expect(new Set(listed)).toEqual(new Set(entries.map((e) => e.path.split(' ')[0])));
  });

  it('the quick start and the walkthrough use flags that exist', () => {
    for (const m of readme.matchAll(/npx swan-provider ([a-z][a-z-]*)([^\n#`]*)/g)) {
      const cmd = commands.get(m[1]!);
      expect(cmd, m[0]).toBeDefined();
      for (const f of m[2]!.matchAll(/--[a-z][a-z-]*/g))
        expect(
          cmd!.options.some((o) => o.long === f[0]),
          `${m[0]}: ${f[0]}`,
        ).toBe(true);
    }
  });
});
