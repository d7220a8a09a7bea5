// Compares V8 heap snapshots (.heapsnapshot, as bench/heap-probe.cjs writes them) by what each object is:
// count and self size per (node type, constructor or name), and the change from the first snapshot to each
// later one. Run: npx tsx bench/heap-compare.ts a.heapsnapshot b.heapsnapshot [c.heapsnapshot] [--top 40]
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

export interface TypeTally {
  count: number;
  selfSize: number;
}

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

/** Count and self size per "type:name" (strings and code grouped by type alone: their names are contents). */
export function tally(file: string): Map<string, TypeTally> {
  const snap = JSON.parse(fs.readFileSync(file, 'utf8')) as Snapshot;
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const width = fields.length;
  const fType = fields.indexOf('type');
  const fName = fields.indexOf('name');
  const fSize = fields.indexOf('self_size');
  const byName = new Set(['object', 'closure', 'native', 'array', 'hidden', 'object shape']);
  const out = new Map<string, TypeTally>();
  for (let i = 0; i < snap.nodes.length; i += width) {
    const type = types[snap.nodes[i + fType]!]!;
    const key = byName.has(type) ? `${type}:${snap.strings[snap.nodes[i + fName]!]!.slice(0, 80)}` : type;
    const t = out.get(key) ?? { count: 0, selfSize: 0 };
    t.count++;
    t.selfSize += snap.nodes[i + fSize]!;
    out.set(key, t);
  }
  return out;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2);
  const topAt = args.indexOf('--top');
  const top = topAt >= 0 ? Number(args[topAt + 1]) : 40;
  const files = args.filter((a, i) => a.endsWith('.heapsnapshot') && i !== topAt + 1);
  if (files.length < 2) {
    console.error('usage: npx tsx bench/heap-compare.ts first.heapsnapshot later.heapsnapshot [...] [--top 40]');
    process.exit(2);
  }
  const tallies = files.map((f) => tally(f));
  const total = (t: Map<string, TypeTally>) =>
    [...t.values()].reduce((a, v) => ({ count: a.count + v.count, selfSize: a.selfSize + v.selfSize }), { count: 0, selfSize: 0 });
  console.log(['snapshot', 'objects', 'self MB'].join('\t'));
  files.forEach((f, i) => {
    const t = total(tallies[i]!);
    console.log([path.basename(f), t.count, (t.selfSize / 1048576).toFixed(2)].join('\t'));
  });
  const first = tallies[0]!;
  const last = tallies.at(-1)!;
  const keys = new Set([...first.keys(), ...last.keys()]);
  const rows = [...keys].map((k) => ({
    k,
    d: (last.get(k)?.count ?? 0) - (first.get(k)?.count ?? 0),
    ds: (last.get(k)?.selfSize ?? 0) - (first.get(k)?.selfSize ?? 0),
  }));
  const show = (sorted: typeof rows, title: string) => {
    console.log(`\n${title}\n${['type:name', ...files.map((f) => path.basename(f, '.heapsnapshot')), 'Δcount', 'Δself KB'].join('\t')}`);
    for (const r of sorted.slice(0, top)) console.log([r.k, ...tallies.map((t) => t.get(r.k)?.count ?? 0), r.d, (r.ds / 1024).toFixed(1)].join('\t'));
  };
  show(
    [...rows].sort((a, b) => b.d - a.d),
    'largest growth in count',
  );
  show(
    [...rows].sort((a, b) => b.ds - a.ds),
    'largest growth in self size',
  );
}
