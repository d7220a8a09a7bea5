#!/usr/bin/env node
// The folder graph of src/core from its imports: which folder imports which (with the files that do it),
// and the cycles (strongly connected groups of folders). A file at the root of src/core is a node of its
// own (agent.ts, log.ts …). Type-only imports count: a folder that needs another's types depends on it.
//   node scripts/import-graph.mjs            edges and cycles
//   node scripts/import-graph.mjs --json     the same as JSON
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(process.argv.find((a) => a.startsWith('--root='))?.slice(7) ?? 'src/core');
const asJson = process.argv.includes('--json');

function files(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = path.join(dir, d.name);
    if (d.isDirectory()) return files(p);
    return /\.tsx?$/.test(d.name) && !d.name.endsWith('.d.ts') ? [p] : [];
  });
}

/** The node a file belongs to: its first folder under the root, or the file itself at the root. */
function nodeOf(file) {
  const rel = path.relative(root, file).split(path.sep);
  return rel.length === 1 ? rel[0] : `${rel[0]}/`;
}

function resolve(from, spec) {
  const base = path.resolve(path.dirname(from), spec);
  for (const c of [base, `${base}.ts`, `${base}.tsx`, path.join(base, 'index.ts')]) {
    if (fs.existsSync(c) && fs.statSync(c).isFile()) return c;
  }
  return undefined;
}

const IMPORT = /(?:^|\n)\s*(import|export)\s+(type\s+)?(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

const edges = new Map(); // "a -> b" -> { from, to, files: Set, typeOnly: boolean }
const nodes = new Set();
const all = files(root);
for (const file of all) {
  const from = nodeOf(file);
  nodes.add(from);
  const text = fs.readFileSync(file, 'utf8');
  for (const m of text.matchAll(IMPORT)) {
    const spec = m[3] ?? m[4];
    if (!spec || !spec.startsWith('.')) continue;
    const target = resolve(file, spec);
    if (!target || !target.startsWith(root + path.sep)) continue;
    const to = nodeOf(target);
    if (to === from) continue;
    const key = `${from} -> ${to}`;
    const e = edges.get(key) ?? { from, to, files: new Set(), typeOnly: true };
    e.files.add(`${path.relative(root, file)} -> ${path.relative(root, target)}`);
    if (!m[2] && m[1] === 'import' && !/^\s*import\s+type\s/.test(m[0].trimStart()) ) e.typeOnly = e.typeOnly && false;
    if (m[4] || m[1] === 'export') e.typeOnly = false;
    edges.set(key, e);
  }
}

// Tarjan's strongly connected components.
const adj = new Map([...nodes].map((n) => [n, []]));
for (const e of edges.values()) adj.get(e.from).push(e.to);
let index = 0;
const idx = new Map();
const low = new Map();
const stack = [];
const on = new Set();
const sccs = [];
function strong(v) {
  idx.set(v, index);
  low.set(v, index++);
  stack.push(v);
  on.add(v);
  for (const w of adj.get(v) ?? []) {
    if (!idx.has(w)) {
      strong(w);
      low.set(v, Math.min(low.get(v), low.get(w)));
    } else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
  }
  if (low.get(v) === idx.get(v)) {
    const c = [];
    let w;
    do {
      w = stack.pop();
      on.delete(w);
      c.push(w);
    } while (w !== v);
    if (c.length > 1) sccs.push(c.sort());
  }
}
for (const n of nodes) if (!idx.has(n)) strong(n);

const cycles = sccs.map((c) => ({
  nodes: c,
  edges: [...edges.values()].filter((e) => c.includes(e.from) && c.includes(e.to)).map((e) => ({ from: e.from, to: e.to, typeOnly: e.typeOnly, files: [...e.files].sort() })),
}));

if (asJson) {
  console.log(JSON.stringify({ files: all.length, nodes: [...nodes].sort(), edges: [...edges.values()].map((e) => ({ ...e, files: [...e.files].sort() })), cycles }, null, 2));
} else {
  console.log(`${all.length} files, ${nodes.size} nodes, ${edges.size} folder edges, ${cycles.length} cycle group(s)`);
  for (const e of [...edges.values()].sort((a, b) => a.from.localeCompare(b.from) || a.to.localeCompare(b.to))) {
    console.log(`  ${e.from} -> ${e.to}  (${e.files.size}${e.typeOnly ? ', types only' : ''})`);
  }
  for (const c of cycles) {
    console.log(`\ncycle: ${c.nodes.join(' ')}`);
    for (const e of c.edges) console.log(`  ${e.from} -> ${e.to}${e.typeOnly ? ' (types only)' : ''}: ${e.files.join(', ')}`);
  }
}
