// GPU history per minute on disk: averages and peaks per minute, survives a restart, stays bounded,
// skips a damaged line.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import type { GpuSample } from '../../../src/shared/types';
import { memoryLog } from '../../../src/core/base/log';
import { MinuteHistory } from '../../../src/core/gpu/minute-history';
import { tempHome } from '../../support/stack';

let home: string | undefined;
afterEach(() => {
  if (home) fs.rmSync(home, { recursive: true, force: true });
  home = undefined;
});

const M0 = 1_700_000_040_000; // a minute boundary
const s = (ts: number, util: number, temp: number, power: number, vram: number): GpuSample => ({
  ts,
  available: true,
  devices: [{ index: 0, utilization: util, vramUsedMb: vram, vramTotalMb: 24_000, temperatureC: temp, powerW: power, powerLimitW: 350, fanPercent: 40 }],
  cpuPercent: 10,
  ramUsedMb: 1000,
  ramTotalMb: 32_000,
});

it('one point per minute: utilisation and power averaged, temperature and VRAM at their peak; kept on disk', async () => {
  home = tempHome();
  const file = path.join(home, 'gpu-history.jsonl');
  const h = new MinuteHistory(file, memoryLog().child('gpu'));
  h.add(s(M0 + 1000, 0.2, 60, 100, 5000));
  h.add(s(M0 + 2000, 0.6, 70, 300, 7000));
  h.add({ ...s(M0 + 3000, 1, 99, 999, 99_999), available: false }); // "metrics unavailable" is not a reading
  h.add(s(M0 + 61_000, 1, 50, 200, 4000)); // next minute closes the first
  expect(h.since(0)).toHaveLength(1);
  const [p] = h.since(0);
  expect(p!.ts).toBe(M0);
  expect(p!.devices[0]).toMatchObject({ utilization: 0.4, powerW: 200, temperatureC: 70, vramUsedMb: 7000, vramTotalMb: 24_000 });
  h.close();
  await h.flushed();
  expect(fs.readFileSync(file, 'utf8').trim().split('\n')).toHaveLength(2);
  expect(fs.statSync(file).mode & 0o777).toBe(0o600);

  const again = new MinuteHistory(file, memoryLog().child('gpu'));
  expect(again.since(0).map((x) => x.ts)).toEqual([M0, M0 + 60_000]);
  expect(again.since(M0 + 30_000).map((x) => x.ts)).toEqual([M0 + 60_000]);
});

it('stays bounded in memory and on disk, and skips a damaged line', async () => {
  home = tempHome();
  const file = path.join(home, 'gpu-history.jsonl');
  fs.writeFileSync(file, 'not json\n{"ts":"x"}\n');
  const log = memoryLog();
  const h = new MinuteHistory(file, log.child('gpu'), 5);
  expect(log.entries(10).some((e) => /2 unreadable lines/.test(e.msg))).toBe(true);
  for (let m = 0; m < 30; m++) h.add(s(M0 + m * 60_000, 0.5, 60, 100, 1000));
  h.close();
  await h.flushed();
  expect(h.since(0).length).toBeLessThanOrEqual(5);
  const lines = fs.readFileSync(file, 'utf8').trim().split('\n');
  expect(lines.length).toBeLessThanOrEqual(12);
  expect(new MinuteHistory(file, memoryLog().child('gpu'), 5).since(0).at(-1)!.ts).toBe(M0 + 29 * 60_000);
});
