// docs/ is a map for the next reader: every relative link in README.md and docs/ reaches a file, the
// performance page stays a page (method, figures, targets, noise band), and no comment in src/ says which
// session, pass or issue wrote it (a comment says why the code is as it is).
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/traces';

function files(dir: string, ext: RegExp): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : files(p, ext);
    return ext.test(e.name) ? [p] : [];
  });
}

const markdown = [path.join(repoRoot, 'README.md'), ...files(path.join(repoRoot, 'docs'), /\.md$/), ...files(path.join(repoRoot, 'src'), /\.md$/)];

describe('docs', () => {
  it('every relative link in README.md, docs/ and src/ reaches a file or folder', () => {
    const broken: string[] = [];
    for (const file of markdown) {
      const text = fs.readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/i.test(target!) || target!.startsWith('#')) continue;
        const local = decodeURIComponent(target!.split('#')[0]!);
        if (!fs.existsSync(path.resolve(path.dirname(file), local))) broken.push(`${path.relative(repoRoot, file)} → ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('docs/performance.md is at most 150 lines, and has its four parts', () => {
    const text = fs.readFileSync(path.join(repoRoot, 'docs', 'performance.md'), 'utf8');
    expect(text.split('\n').length).toBeLessThanOrEqual(150);
    for (const part of ['## Method', '## Targets', '## Current figures', '## The noise band']) expect(text).toContain(part);
  });

  it('no comment in src/ cites a session, pass or issue number', () => {
    const cites = /(session [0-9]+|(first|second|third|[a-z]+th) pass|issue #?[0-9]+)/i;
    const found = files(path.join(repoRoot, 'src'), /\.(ts|tsx|js|mjs)$/).flatMap((f) =>
      fs
        .readFileSync(f, 'utf8')
        .split('\n')
        .map((line, i) => ({ line, at: `${path.relative(repoRoot, f)}:${i + 1}` }))
        .filter(({ line }) => cites.test(line))
        .map(({ at, line }) => `${at}: ${line.trim()}`),
    );
    expect(found).toEqual([]);
  });
});

describe('docs/ARCHITECTURE.md', () => {
  const text = fs.readFileSync(path.join(repoRoot, 'docs', 'ARCHITECTURE.md'), 'utf8');
  const core = path.join(repoRoot, 'src', 'core');
  // The module table of src/core: its first column names files and folders, a bare name being in the
  // folder of the name before it (`hub/link.ts`, `connection.ts` is hub/connection.ts).
  const section = text.split(/^## /m).find((s) => s.startsWith('src/core'));
  const named = (section ?? '')
    .split('\n')
    .filter((l) => l.startsWith('| `'))
    .flatMap((row) => {
      let folder = '';
      return [...row.split('|')[1]!.matchAll(/`([^`]+)`/g)].map(([, name]) => {
        const p = name!.includes('/') ? name! : folder + name!;
        folder = p.endsWith('/') ? p : p.slice(0, p.lastIndexOf('/') + 1);
        return p;
      });
    });

  it('its table of src/core names only what exists', () => {
    expect(section).toBeDefined();
    expect(named.filter((p) => !fs.existsSync(path.join(core, p)))).toEqual([]);
  });

  it('its table of src/core has a row for every folder and root file of src/core', () => {
    const entries = fs
      .readdirSync(core, { withFileTypes: true })
      .filter((e) => e.isDirectory() || /\.ts$/.test(e.name))
      .map((e) => (e.isDirectory() ? `${e.name}/` : e.name));
    expect(entries.filter((e) => !named.some((p) => p === e || p.startsWith(e)))).toEqual([]);
  });
});

describe("README.md's architecture", () => {
  const readme = fs.readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
  const block = /## Architecture\n\n```\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
  // The lines of src/core: from `src/core` to the next line that starts at the margin.
  const coreLines = block.split('\n').reduce<{ inCore: boolean; text: string }>(
    (acc, line) => {
      if (line.startsWith('src/')) acc.inCore = line.startsWith('src/core');
      if (acc.inCore) acc.text += `${line}\n`;
      return acc;
    },
    { inCore: false, text: '' },
  ).text;
  const core = path.join(repoRoot, 'src', 'core');
  const folders = fs
    .readdirSync(core, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name);

  it('names every folder of src/core, and only folders that exist', () => {
    const named = [...coreLines.matchAll(/(?:^|\s)([a-z][a-z-]*)\/(?=[\s(]|$)/gm)].map(([, n]) => n!);
    expect(folders.filter((f) => !named.includes(f))).toEqual([]);
    expect(named.filter((n) => !folders.includes(n) && n !== 'src')).toEqual([]);
  });
});
