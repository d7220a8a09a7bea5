// The owner's pause schedule: weekly windows in local time during which serving is paused.
import { z } from 'zod';
import { formatIssues, issueField } from '../../shared/zod-issues';
import { SchedulerConfigError } from './types';

const hhmm = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'use 24-hour HH:MM, e.g. "22:30"');

export const pauseWindowSchema = z.object({
  /** Days the window starts on: 0 = Sunday … 6 = Saturday. */
  days: z.array(z.number().int().min(0).max(6)).min(1),
  from: hhmm,
  /** Earlier than `from` means the window runs past midnight into the next day; equal means all day. */
  to: hhmm,
  /** On a rig with several GPUs: the GPUs this window pauses (the others serve); absent: the whole rig. */
  gpus: z.array(z.number().int().min(0).max(255)).min(1).max(64).optional(),
});

export type PauseWindow = z.infer<typeof pauseWindowSchema>;

export const pauseScheduleSchema = z.array(pauseWindowSchema).max(100);

/** Parses a schedule from outside (settings, IPC); throws a SchedulerConfigError saying what is wrong. */
export function parseSchedule(input: unknown): PauseWindow[] {
  const parsed = pauseScheduleSchema.safeParse(input);
  if (!parsed.success) throw new SchedulerConfigError('invalid_schedule', `Invalid pause schedule: ${formatIssues(parsed.error)}`, issueField(parsed.error));
  return parsed.data;
}

function minutes(t: string): number {
  const [h, m] = t.split(':');
  return Number(h) * 60 + Number(m);
}

/** The window that covers local time `at`, if any. */
export function activeWindow(windows: readonly PauseWindow[], at: number): PauseWindow | undefined {
  const d = new Date(at);
  const day = d.getDay();
  const yesterday = (day + 6) % 7;
  const now = d.getHours() * 60 + d.getMinutes();
  return windows.find((w) => {
    const from = minutes(w.from);
    const to = minutes(w.to);
    if (from === to) return w.days.includes(day);
    if (from < to) return w.days.includes(day) && now >= from && now < to;
    // Past midnight: the evening part on a listed day, the morning part on the day after one.
    return (w.days.includes(day) && now >= from) || (w.days.includes(yesterday) && now < to);
  });
}

export function describeWindow(w: PauseWindow): string {
  return w.from === w.to ? 'all day' : `${w.from}–${w.to}`;
}
