// Sizes and time left as the download card shows them: binary units, and "unknown" when there is no estimate.
import { expect, it } from 'vitest';
import { fmtBytes, fmtTimeLeft } from '../../../src/renderer/lib/format';

it('sizes in binary units', () => {
  expect([12, 300 * 1024, 1.5 * 1024 ** 2, 4.25 * 1024 ** 3].map(fmtBytes)).toEqual(['12 B', '300 KiB', '1.5 MiB', '4.3 GiB']);
});

it('time left: seconds, minutes, hours; no estimate is unknown, never "0 s"', () => {
  expect([0.2, 42, 600, 5400, null, Infinity].map(fmtTimeLeft)).toEqual([
    '1 s left',
    '42 s left',
    '10 min left',
    '1.5 h left',
    'time left unknown',
    'time left unknown',
  ]);
});
