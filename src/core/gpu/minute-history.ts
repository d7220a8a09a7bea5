// GPU history beyond the live window: each minute of 1 Hz samples becomes one point (utilisation and
// power averaged, VRAM, temperature and RAM at their peak), appended to a small JSON-lines file in the
// home folder and kept bounded (7 days by default: the file is rewritten with only those when it has
// grown to twice that). Writing is asynchronous and at most once a minute; a bad line is skipped.
import fs from 'node:fs';
import type { GpuDeviceSample, GpuSample } from '../../shared/types';
import type { Logger } from '../base/log';

const MINUTE = 60_000;
export const DEFAULT_KEEP_MINUTES = 7 * 24 * 60;

interface Acc {
  minute: number;
  n: number;
  cpu: number[];
  ram: number | null;
  ramTotal: number | null;
  devices: Map<
    number,
    {
      n: number;
      util: number;
      utilN: number;
      power: number;
      powerN: number;
      vram: number | null;
      vramTotal: number | null;
      temp: number | null;
      powerLimit: number | null;
      fan: number | null;
    }
  >;
}

const max = (a: number | null, b: number | null): number | null => (b === null ? a : a === null ? b : Math.max(a, b));

function finite(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

/** Reads one stored line back into a sample, or undefined when it is not one. */
export function parsePoint(line: string): GpuSample | undefined {
  let j: unknown;
  try {
    j = JSON.parse(line);
  } catch {
    return undefined;
  }
  const o = j as { ts?: unknown; devices?: unknown; cpuPercent?: unknown; ramUsedMb?: unknown; ramTotalMb?: unknown };
  if (typeof o?.ts !== 'number' || !Array.isArray(o.devices)) return undefined;
  const devices: GpuDeviceSample[] = [];
  for (const d of o.devices as Record<string, unknown>[]) {
    if (typeof d?.index !== 'number') return undefined;
    devices.push({
      index: d.index,
      utilization: finite(d.utilization),
      vramUsedMb: finite(d.vramUsedMb),
      vramTotalMb: finite(d.vramTotalMb),
      temperatureC: finite(d.temperatureC),
      powerW: finite(d.powerW),
      powerLimitW: finite(d.powerLimitW),
      fanPercent: finite(d.fanPercent),
    });
  }
  return { ts: o.ts, available: true, devices, cpuPercent: finite(o.cpuPercent), ramUsedMb: finite(o.ramUsedMb), ramTotalMb: finite(o.ramTotalMb) };
}

export class MinuteHistory {
  private points: GpuSample[] = [];
  private acc: Acc | undefined;
  private appended = 0;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly file: string,
    private readonly log: Logger,
    private readonly keepMinutes = DEFAULT_KEEP_MINUTES,
  ) {
    this.load();
  }

  private load(): void {
    let text: string;
    try {
      text = fs.readFileSync(this.file, 'utf8');
    } catch {
      return;
    }
    let bad = 0;
    for (const line of text.split('\n')) {
      if (!line) continue;
      const p = parsePoint(line);
      if (p) this.points.push(p);
      else bad++;
    }
    if (bad) this.log.warn(`GPU history: ${bad} unreadable lines in ${this.file} were skipped`);
    this.points.sort((a, b) => a.ts - b.ts);
    this.trim();
  }

  private trim(): void {
    const newest = this.points[this.points.length - 1]?.ts ?? 0;
    const cutoff = newest - this.keepMinutes * MINUTE;
    const first = this.points.findIndex((p) => p.ts > cutoff);
    if (first > 0) this.points.splice(0, first);
  }

  /** Feeds one live sample; a finished minute becomes a stored point. */
  add(s: GpuSample): void {
    if (!s.available) return;
    const minute = Math.floor(s.ts / MINUTE) * MINUTE;
    if (this.acc && minute !== this.acc.minute) this.close();
    const a: Acc = (this.acc ??= { minute, n: 0, cpu: [], ram: null, ramTotal: null, devices: new Map() });
    a.n++;
    if (s.cpuPercent !== null) a.cpu.push(s.cpuPercent);
    a.ram = max(a.ram, s.ramUsedMb);
    a.ramTotal = s.ramTotalMb ?? a.ramTotal;
    for (const d of s.devices) {
      let e = a.devices.get(d.index);
      if (!e)
        a.devices.set(d.index, (e = { n: 0, util: 0, utilN: 0, power: 0, powerN: 0, vram: null, vramTotal: null, temp: null, powerLimit: null, fan: null }));
      e.n++;
      if (d.utilization !== null) {
        e.util += d.utilization;
        e.utilN++;
      }
      if (d.powerW !== null) {
        e.power += d.powerW;
        e.powerN++;
      }
      e.vram = max(e.vram, d.vramUsedMb);
      e.temp = max(e.temp, d.temperatureC);
      e.fan = max(e.fan, d.fanPercent);
      e.vramTotal = d.vramTotalMb ?? e.vramTotal;
      e.powerLimit = d.powerLimitW ?? e.powerLimit;
    }
  }

  /** Ends the current minute now (also on stop), storing its point. */
  close(): void {
    const a = this.acc;
    this.acc = undefined;
    if (!a || a.n === 0) return;
    const point: GpuSample = {
      ts: a.minute,
      available: true,
      devices: [...a.devices.entries()].map(([index, e]) => ({
        index,
        utilization: e.utilN ? e.util / e.utilN : null,
        vramUsedMb: e.vram,
        vramTotalMb: e.vramTotal,
        temperatureC: e.temp,
        powerW: e.powerN ? e.power / e.powerN : null,
        powerLimitW: e.powerLimit,
        fanPercent: e.fan,
      })),
      cpuPercent: a.cpu.length ? a.cpu.reduce((x, y) => x + y, 0) / a.cpu.length : null,
      ramUsedMb: a.ram,
      ramTotalMb: a.ramTotal,
    };
    this.points.push(point);
    this.trim();
    this.appended++;
    const rewrite = this.appended >= this.keepMinutes;
    if (rewrite) this.appended = 0;
    const snapshot = rewrite ? this.points.map((p) => JSON.stringify(p)).join('\n') + '\n' : undefined;
    this.writing = this.writing.then(async () => {
      try {
        if (snapshot !== undefined) {
          await fs.promises.writeFile(`${this.file}.tmp`, snapshot, { mode: 0o600 });
          await fs.promises.rename(`${this.file}.tmp`, this.file);
        } else {
          await fs.promises.appendFile(this.file, JSON.stringify(point) + '\n', { mode: 0o600 });
        }
      } catch (e) {
        this.log.warn(`GPU history could not be saved: ${(e as Error).message}`);
      }
    });
  }

  /** Points (one per minute) from `hours` ago up to now, oldest first. */
  since(fromTs: number): GpuSample[] {
    return this.points.filter((p) => p.ts >= fromTs);
  }

  /** Resolves once pending writes are on disk (tests, stop). */
  flushed(): Promise<void> {
    return this.writing;
  }
}
