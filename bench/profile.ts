// Reads a V8 .cpuprofile (node --cpu-prof) and sums self time per function and per area (our modules
// by folder, dependencies by package, node internals, GC), so a missed target can be explained by the
// frames that cost the time.
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { ROOT } from './child';
import { round } from './stats';

const profileSchema = z.object({
  nodes: z.array(
    z.object({
      id: z.number(),
      callFrame: z.object({ functionName: z.string(), url: z.string(), lineNumber: z.number() }),
      hitCount: z.number().optional(),
    }),
  ),
  startTime: z.number(),
  endTime: z.number(),
  samples: z.array(z.number()).optional(),
  timeDeltas: z.array(z.number()).optional(),
});

export interface FrameCost {
  frame: string;
  selfMs: number;
  /** share of the busy (non-idle) time, % */
  percent: number;
}

export interface ProfileSummary {
  file: string;
  wallMs: number;
  busyMs: number;
  top: FrameCost[];
  areas: FrameCost[];
}

function shortUrl(url: string): string {
  const rootUrl = `file://${ROOT}/`;
  if (url.startsWith(rootUrl)) {
    const rel = url.slice(rootUrl.length);
    const nm = rel.lastIndexOf('node_modules/');
    return nm >= 0 ? rel.slice(nm + 'node_modules/'.length) : rel;
  }
  return url;
}

/** The area a frame belongs to: src/core/<folder>, a package, node internals, or a V8 pseudo-frame. */
export function areaOf(functionName: string, url: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return 'node internals';
  const u = shortUrl(url);
  if (u.startsWith('src/'))
    return u
      .split('/')
      .slice(0, u.startsWith('src/core/') && u.split('/').length > 3 ? 3 : 2)
      .join('/');
  if (u === url) return 'other';
  const parts = u.split('/');
  return parts[0]?.startsWith('@') ? `${parts[0]}/${parts[1]}` : (parts[0] ?? 'other');
}

function top(map: Map<string, number>, busyMs: number, n: number): FrameCost[] {
  return [...map.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([frame, us]) => ({ frame, selfMs: round(us / 1000, 1), percent: round((us / 1000 / busyMs) * 100, 1) }));
}

/** Sums self time per frame; with skipMs, samples in the first skipMs of the profile (start-up) are left out. */
export function summarizeProfile(file: string, skipMs = 0, n = 15): ProfileSummary {
  const p = profileSchema.parse(JSON.parse(fs.readFileSync(file, 'utf8')));
  const self = new Map<number, number>();
  let wallUs = p.endTime - p.startTime;
  if (p.samples && p.timeDeltas && p.samples.length === p.timeDeltas.length) {
    // timeDeltas[i] is the time before sample i; charge it to the sample's frame.
    let t = 0;
    const skipUs = skipMs * 1000;
    for (let i = 0; i < p.samples.length; i++) {
      const d = Math.max(0, p.timeDeltas[i] as number);
      t += d;
      if (t <= skipUs) continue;
      self.set(p.samples[i] as number, (self.get(p.samples[i] as number) ?? 0) + d);
    }
    wallUs = Math.max(0, wallUs - skipUs);
  } else {
    const hits = p.nodes.reduce((a, x) => a + (x.hitCount ?? 0), 0) || 1;
    const per = (p.endTime - p.startTime) / hits;
    for (const x of p.nodes) self.set(x.id, (x.hitCount ?? 0) * per);
  }
  const frames = new Map<string, number>();
  const areas = new Map<string, number>();
  let busyUs = 0;
  for (const x of p.nodes) {
    const us = self.get(x.id) ?? 0;
    if (us === 0) continue;
    const { functionName, url, lineNumber } = x.callFrame;
    if (functionName === '(idle)') continue;
    busyUs += us;
    // Under tsx, V8 sees each module's transformed code, whose positions do not match the .ts lines: name
    // the file only. Plain JavaScript (node internals, dependencies) keeps its line.
    const where = url ? (url.endsWith('.ts') ? shortUrl(url) : `${shortUrl(url)}:${lineNumber + 1}`) : '';
    const key = where ? `${functionName || '(anonymous)'} ${where}` : functionName || '(anonymous)';
    frames.set(key, (frames.get(key) ?? 0) + us);
    const area = areaOf(functionName, url);
    areas.set(area, (areas.get(area) ?? 0) + us);
  }
  const busyMs = busyUs / 1000;
  return { file: path.basename(file), wallMs: round(wallUs / 1000, 0), busyMs: round(busyMs, 0), top: top(frames, busyMs, n), areas: top(areas, busyMs, 12) };
}

/**
 * The main thread's .cpuprofile in dir. Node names them CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile;
 * the tsx loader's worker thread writes one too (thread id > 0), which is not the one wanted.
 */
export function mainThreadProfile(dir: string): string | undefined {
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  const main = files.find((f) => f.split('.')[4] === '0') ?? files.sort((a, b) => fs.statSync(path.join(dir, b)).size - fs.statSync(path.join(dir, a)).size)[0];
  return main ? path.join(dir, main) : undefined;
}
