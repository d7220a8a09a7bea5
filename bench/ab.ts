// A/B builds of the agent for the latency bench: `node --import tsx bench/ab.ts <label>` bundles the CLI
// from the current sources (as scripts/build-cli.mjs does) into out/ab/<label>.mjs and writes the launcher
// out/ab/<label>-launch.mjs. Then, after changing the code,
//   BENCH_ONLY=latency BENCH_AGENT_B=out/ab/<label>-launch.mjs node bin/bench.js
// runs that saved build beside the current one, taking turns with it in the same run (docs/performance.md).
import fs from 'node:fs';
import path from 'node:path';
import { bundle } from './agent-bundle';
import { ROOT } from './child';

const label = process.argv[2];
if (!label || !/^[\w.-]+$/.test(label)) {
  process.stderr.write('usage: node --import tsx bench/ab.ts <label>   (letters, digits, . _ -)\n');
  process.exit(2);
}
const dir = path.join(ROOT, 'out', 'ab');
fs.mkdirSync(dir, { recursive: true });
await bundle(path.join(ROOT, 'src', 'cli', 'main.ts'), path.join(dir, `${label}.mjs`));
const launcher = path.join(dir, `${label}-launch.mjs`);
// Started as bin/swan-provider.js starts the agent from its bundle.
fs.writeFileSync(launcher, `const { main } = await import('./${label}.mjs');\nawait main(process.argv);\n`);
process.stdout.write(`${path.relative(ROOT, launcher)}\n`);
