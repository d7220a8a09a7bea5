// The other helpers' benches, run when their files exist: the GPU sampler's cost (bench/gpu-sampler.ts,
// benchGpuSampler()), the ledger's insert and query times (bench/ledger.ts, benchLedger(rows)), the UI
// render cost in Chromium (bench/ui-render.ts) and the fault suite's soak (bench/soak.ts, opt-in with
// BENCH_SOAK=1: it is long). Each is imported by file URL so a missing file is a printed skip, not a crash.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from './child';
import { round } from './stats';

export interface HelperBench {
  name: string;
  file: string;
  status: 'ok' | 'skipped' | 'failed';
  reason?: string;
  seconds?: number;
  figures?: Record<string, number | string | boolean>;
}

export type HelperId = 'gpu' | 'ledger' | 'ui' | 'soak';

interface HelperSpec {
  id: HelperId;
  name: string;
  file: string;
  owner: string;
  exports: string[];
  args: unknown[];
  optIn?: string;
}

/** Flattens what a helper returned into printable figures (nested objects as dotted keys). */
export function flatten(v: unknown, prefix = '', out: Record<string, number | string | boolean> = {}): Record<string, number | string | boolean> {
  if (v === null || v === undefined) return out;
  if (typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean') {
    out[prefix || 'value'] = v;
    return out;
  }
  if (Array.isArray(v)) {
    v.forEach((x, i) => flatten(x, prefix ? `${prefix}.${i}` : String(i), out));
    return out;
  }
  if (typeof v === 'object') for (const [k, x] of Object.entries(v)) flatten(x, prefix ? `${prefix}.${k}` : k, out);
  return out;
}

async function runOne(spec: HelperSpec, env: NodeJS.ProcessEnv): Promise<HelperBench> {
  const base = { name: spec.name, file: spec.file };
  const abs = path.join(ROOT, spec.file);
  if (!fs.existsSync(abs)) return { ...base, status: 'skipped', reason: `${spec.file} is not available yet (${spec.owner})` };
  if (spec.optIn && env[spec.optIn] !== '1') return { ...base, status: 'skipped', reason: `opt-in: set ${spec.optIn}=1 to run it` };
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(abs).href)) as Record<string, unknown>;
  } catch (e) {
    return { ...base, status: 'failed', reason: `could not load ${spec.file}: ${(e as Error).message}` };
  }
  const fnName = spec.exports.find((n) => typeof mod[n] === 'function');
  if (!fnName) return { ...base, status: 'skipped', reason: `${spec.file} exports none of ${spec.exports.join(', ')}` };
  const t0 = performance.now();
  try {
    const result = await (mod[fnName] as (...a: unknown[]) => unknown)(...spec.args);
    return { ...base, status: 'ok', seconds: round((performance.now() - t0) / 1000, 1), figures: flatten(result) };
  } catch (e) {
    return { ...base, status: 'failed', seconds: round((performance.now() - t0) / 1000, 1), reason: (e as Error).message };
  }
}

export interface HelperArgs {
  ledgerRows: number;
  /** Shorter GPU sampler run (quick mode). */
  gpuDurationMs?: number;
}

export async function runHelperBenches(
  ids: HelperId[],
  a: HelperArgs,
  env: NodeJS.ProcessEnv = process.env,
  log: (line: string) => void = () => undefined,
): Promise<HelperBench[]> {
  const specs: HelperSpec[] = [
    {
      id: 'gpu',
      name: 'GPU sampler',
      file: 'bench/gpu-sampler.ts',
      owner: 'the GPU helper owns it',
      exports: ['benchGpuSampler'],
      args: a.gpuDurationMs ? [{ durationMs: a.gpuDurationMs }] : [],
    },
    { id: 'ledger', name: 'Ledger', file: 'bench/ledger.ts', owner: 'the ledger helper owns it', exports: ['benchLedger'], args: [a.ledgerRows] },
    {
      id: 'ui',
      name: 'UI render (10,000 requests, 1-hour charts)',
      file: 'bench/ui-render.ts',
      owner: 'the UI helper owns it',
      exports: ['benchUiRender', 'benchUi', 'default'],
      args: [],
    },
    {
      id: 'soak',
      name: 'Fault-suite soak',
      file: 'bench/soak.ts',
      owner: 'the fault-suite helper owns it',
      exports: ['benchSoak', 'soak', 'default'],
      args: [],
      optIn: 'BENCH_SOAK',
    },
  ];
  const out: HelperBench[] = [];
  for (const spec of specs.filter((x) => ids.includes(x.id))) {
    if (fs.existsSync(path.join(ROOT, spec.file)) && !(spec.optIn && env[spec.optIn] !== '1')) log(`${spec.name}: running ${spec.file}…`);
    const r = await runOne(spec, env);
    log(`${spec.name}: ${r.status}${r.reason ? ` (${r.reason})` : ''}${r.seconds !== undefined ? ` in ${r.seconds} s` : ''}`);
    out.push(r);
  }
  return out;
}
