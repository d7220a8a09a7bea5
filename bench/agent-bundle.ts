// The agent prebuilt into one JavaScript file (esbuild, dependencies left as imports), to show what
// the agent costs without tsx compiling TypeScript in the process. The bundle is written under
// node_modules/.cache so its imports resolve from the project's node_modules. Explains a footprint
// figure; users run bin/swan-provider.js (with tsx), which is what the headline figures measure.
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './child';

export interface Bundle {
  file: string;
  ms: number;
}

/** Builds the bundle, or returns why it cannot (esbuild not installed). */
export async function buildAgentBundle(): Promise<Bundle | { why: string }> {
  let esbuild: typeof import('esbuild');
  try {
    esbuild = await import('esbuild');
  } catch (e) {
    return { why: `esbuild is not installed (${(e as Error).message})` };
  }
  const dir = path.join(ROOT, 'node_modules', '.cache', 'swan-bench');
  fs.mkdirSync(dir, { recursive: true });
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
  await esbuild.build({ entryPoints: [entry], outfile: file, bundle: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external', logLevel: 'silent' });
  return { file, ms: Math.round(performance.now() - t0) };
}
