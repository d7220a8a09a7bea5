// Relays prebuilt into one JavaScript file each (esbuild, dependencies left as imports), written under
// node_modules/.cache so their imports resolve from the project's node_modules. The agent's `run` alone
// explains a footprint figure (users run bin/swan-provider.js, which runs out/cli/main.mjs, the same kind
// of bundle, built by `npm run bench` first). The minimal forwarder is always run from its bundle, so the
// two relays compared side by side are built the same way: under `node --import tsx` it carried the tsx
// loader (its own thread and about 33 MB of RSS, bench/results.md's idle footprint) and esbuild's
// keepNames (a property array on every named closure), which the agent does not.
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './child';

export interface Bundle {
  file: string;
  ms: number;
}

/** Where the bench's bundles go: under node_modules, so their imports resolve from the project's packages. */
function cacheDir(): string {
  const dir = path.join(ROOT, 'node_modules', '.cache', 'swan-bench');
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

/** Builds the bundle, or returns why it cannot (esbuild not installed). */
export async function buildAgentBundle(): Promise<Bundle | { why: string }> {
  let esbuild: typeof import('esbuild');
  try {
    esbuild = await import('esbuild');
  } catch (e) {
    return { why: `esbuild is not installed (${(e as Error).message})` };
  }
  const dir = cacheDir();
  // `run` itself (the code `swan-provider run` calls), without the command-line parser: the bundle takes
  // <config> <home> and runs with discovery off, as the bench's agent does.
  const entry = path.join(dir, 'entry.ts');
  fs.writeFileSync(
    entry,
    [
      `import { runCommand } from ${JSON.stringify(path.join(ROOT, 'src', 'cli', 'run.ts'))};`,
      'const [config, home] = process.argv.slice(2);',
      'process.exitCode = await runCommand({ config, home: home as string, discovery: false });',
      '',
    ].join('\n'),
  );
  const file = path.join(dir, 'agent.mjs');
  const t0 = performance.now();
  await bundle(entry, file, esbuild);
  return { file, ms: Math.round(performance.now() - t0) };
}

/** One entry bundled as scripts/build-cli.mjs bundles the CLI: one ES module for node 20, dependencies left as imports. */
export async function bundle(entry: string, outfile: string, esbuild?: typeof import('esbuild')): Promise<void> {
  const e = esbuild ?? (await import('esbuild'));
  await e.build({ entryPoints: [entry], outfile, bundle: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external', logLevel: 'warning' });
}

/** The minimal forwarder (bench/minimal-forwarder.ts) as one file; esbuild is a dev dependency the bench needs. */
export async function buildForwarderBundle(): Promise<string> {
  const file = path.join(cacheDir(), 'minimal-forwarder.mjs');
  await bundle(path.join(ROOT, 'bench', 'minimal-forwarder.ts'), file);
  return file;
}
