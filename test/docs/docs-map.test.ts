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
