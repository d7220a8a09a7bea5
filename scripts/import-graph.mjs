#!/usr/bin/env node
// The folder graph of src/core from its imports: which folder imports which (with the files that do it),
// the cycles (strongly connected groups of folders), and the edges against the import order
// (scripts/core-order.mjs). A file at the root of src/core is a node of its own (agent.ts …). Type-only
// imports count: a folder that needs another's types depends on it.
//   node scripts/import-graph.mjs            edges, cycles and edges against the order
//   node scripts/import-graph.mjs --json     the same as JSON
import path from 'node:path';
import { coreGraph, cycles, orderViolations, unplaced } from './core-order.mjs';

const root = path.resolve(process.argv.find((a) => a.startsWith('--root='))?.slice(7) ?? 'src/core');
const graph = coreGraph(root);
const groups = cycles(graph);
const against = orderViolations(graph);
const outside = unplaced(graph);

if (process.argv.includes('--json')) {
  console.log(JSON.stringify({ ...graph, cycles: groups, againstOrder: against, unplaced: outside }, null, 2));
} else {
  console.log(
    `${graph.files} files, ${graph.nodes.length} nodes, ${graph.edges.length} folder edges, ${groups.length} cycle group(s), ${against.length} edge(s) against the order`,
  );
  for (const e of graph.edges) console.log(`  ${e.from} -> ${e.to}  (${e.files.length}${e.typeOnly ? ', types only' : ''})`);
  for (const c of groups) {
    console.log(`\ncycle: ${c.nodes.join(' ')}`);
    for (const e of c.edges) console.log(`  ${e.from} -> ${e.to}${e.typeOnly ? ' (types only)' : ''}: ${e.files.join(', ')}`);
  }
  if (against.length) console.log('\nagainst the order:');
  for (const e of against) console.log(`  ${e.from} -> ${e.to}${e.typeOnly ? ' (types only)' : ''}: ${e.files.join(', ')}`);
  if (outside.length) console.log(`\nnot in the order (scripts/core-order.mjs): ${outside.join(' ')}`);
}
