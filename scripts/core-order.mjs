// The order src/core's folders import in, and the folder graph their imports make. One table, read by
// eslint.config.js (one no-restricted-imports block per folder), scripts/import-graph.mjs (the graph as
// text) and test/core/import-order.test.ts (no cycle, no edge against the order). Why this order:
// docs/decisions/0009-feature-modules-and-import-order.md.
import fs from 'node:fs';
import path from 'node:path';

/**
 * The layers, lowest first. A folder may import the folders before it (earlier layers, and earlier in its
 * own row); inside one folder imports are free. Since every edge points backwards, no cycle can form.
 * A node is a folder (`hub/`) or a file at the root of src/core (`agent.ts`).
 */
export const CORE_LAYERS = [
  ['base/'],
  ['http/', 'config/', 'protocol/'],
  ['gpu/', 'engine-client/', 'scheduler/', 'ledger/', 'platform/', 'update/', 'alerts/', 'weights/', 'downloads/', 'fit/', 'managed/'],
  ['models/'],
  ['inference/'],
  ['hub/', 'gateway/', 'metrics/', 'fleet/', 'console/'],
  [
    'engines/',
    // Accounting before serving: the relay commits a request's ledger row before its final message leaves.
    'accounting/',
    'serving/',
    'owner/',
  ],
  ['bridge/'],
  ['agent-options.ts', 'agent.ts'],
];

/** Every node in order, and its place in it. */
export const CORE_ORDER = CORE_LAYERS.flat();
const RANK = new Map(CORE_ORDER.map((n, i) => [n, i]));
const LAYER = new Map(CORE_LAYERS.flatMap((row, i) => row.map((n) => [n, i])));

/** The layer a node is in (undefined for a node the table does not place). */
export function layerOf(node) {
  return LAYER.get(node);
}

/** Whether `from` may import `to`: the same node, or one before it in the order. */
export function mayImport(from, to) {
  if (from === to) return true;
  const a = RANK.get(from);
  const b = RANK.get(to);
  return a !== undefined && b !== undefined && b < a;
}

/** The folders `folder` may not import: every folder after it (root files are not imported by folders). */
export function foldersAfter(folder) {
  const i = RANK.get(folder);
  if (i === undefined) throw new Error(`${folder} is not in CORE_LAYERS`);
  return CORE_ORDER.slice(i + 1).filter((n) => n.endsWith('/'));
}

function sourceFiles(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = path.join(dir, d.name);
    if (d.isDirectory()) return sourceFiles(p);
    return /\.tsx?$/.test(d.name) && !d.name.endsWith('.d.ts') ? [p] : [];
  });
}

function resolveImport(from, spec) {
  const base = path.resolve(path.dirname(from), spec);
  for (const c of [base, `${base}.ts`, `${base}.tsx`, path.join(base, 'index.ts')]) {
    if (fs.existsSync(c) && fs.statSync(c).isFile()) return c;
  }
  return undefined;
}

// Static imports and re-exports (with `import type` / `export type` marked) and dynamic import().
const IMPORT = /(?:^|\n)\s*(import|export)\s+(type\s+)?(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

/**
 * The folder graph of the TypeScript files under `root` (src/core): one edge per pair of nodes an import
 * joins, with the files that make it and whether every one of them imports types only. Type-only imports
 * count as edges: a folder that needs another's types depends on it.
 * @param {string} root
 */
export function coreGraph(root) {
  root = path.resolve(root);
  const nodeOf = (file) => {
    const rel = path.relative(root, file).split(path.sep);
    return rel.length === 1 ? rel[0] : `${rel[0]}/`;
  };
  const files = sourceFiles(root);
  const nodes = new Set();
  const edges = new Map(); // "a -> b" -> { from, to, files: string[], typeOnly }
  for (const file of files) {
    const from = nodeOf(file);
    nodes.add(from);
    const text = fs.readFileSync(file, 'utf8');
    for (const m of text.matchAll(IMPORT)) {
      const spec = m[3] ?? m[4];
      if (!spec || !spec.startsWith('.')) continue;
      const target = resolveImport(file, spec);
      if (!target || !target.startsWith(root + path.sep)) continue;
      const to = nodeOf(target);
      if (to === from) continue;
      const key = `${from} -> ${to}`;
      const e = edges.get(key) ?? { from, to, files: [], typeOnly: true };
      e.files.push(`${path.relative(root, file)} -> ${path.relative(root, target)}`);
      if (m[4] || !m[2]) e.typeOnly = false;
      edges.set(key, e);
    }
  }
  for (const e of edges.values()) e.files = [...new Set(e.files)].sort();
  return { files: files.length, nodes: [...nodes].sort(), edges: [...edges.values()].sort((a, b) => a.from.localeCompare(b.from) || a.to.localeCompare(b.to)) };
}

/** The strongly connected groups of more than one node (Tarjan), each with the edges inside it. */
export function cycles(graph) {
  const adj = new Map(graph.nodes.map((n) => [n, []]));
  for (const e of graph.edges) adj.get(e.from)?.push(e.to);
  let index = 0;
  const idx = new Map();
  const low = new Map();
  const stack = [];
  const on = new Set();
  const groups = [];
  const strong = (v) => {
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
      if (c.length > 1) groups.push(c.sort());
    }
  };
  for (const n of graph.nodes) if (!idx.has(n)) strong(n);
  return groups.map((nodes) => ({ nodes, edges: graph.edges.filter((e) => nodes.includes(e.from) && nodes.includes(e.to)) }));
}

/** The edges against the order (an import of a node after the importer, or of a node the table does not place). */
export function orderViolations(graph) {
  return graph.edges.filter((e) => !mayImport(e.from, e.to));
}

/** The nodes of the graph the table does not place. */
export function unplaced(graph) {
  return graph.nodes.filter((n) => !RANK.has(n));
}
