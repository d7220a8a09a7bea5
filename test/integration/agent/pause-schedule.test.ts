// The owner's pause schedule, saved from the console: a window covering now pauses serving (and
// withdraws the models from the hub); clearing it resumes; a bad window is refused next to its field.
import { afterEach, describe, expect, it } from 'vitest';
import type { SaveResult, SettingsView } from '../../../src/shared/views/settings';
import { registered, startStack, until, type Stack } from '../../support/stack';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

describe('pause schedule', () => {
  it('pauses inside a window, resumes when it is removed, and refuses a bad one', async () => {
    stack = await startStack();
    await registered(stack);
    const model = stack.engines[0]!.modelIds[0]!;
    const allDay = [{ days: [0, 1, 2, 3, 4, 5, 6], from: '00:00', to: '00:00' }];
    expect(((await stack.agent.invoke('settings.save', { patch: { pauseSchedule: allDay } })) as SaveResult).ok).toBe(true);
    expect(stack.agent.snapshot().pause).toMatchObject({ paused: true, cause: 'schedule' });
    await until(() => stack!.hub!.providers()[0]!.models.length === 0, 'models withdrawn');
    expect(((await stack.agent.invoke('settings.get', {})) as SettingsView).pauseSchedule).toEqual(allDay);
    const bad = (await stack.agent.invoke('settings.save', { patch: { pauseSchedule: [{ days: [], from: '25:00', to: '10:00' }] } })) as SaveResult;
    expect(bad.ok).toBe(false);
    expect(bad.ok === false && bad.errors.pauseSchedule).toMatch(/Pause schedule/);
    expect(((await stack.agent.invoke('settings.save', { patch: { pauseSchedule: [] } })) as SaveResult).ok).toBe(true);
    expect(stack.agent.snapshot().pause.paused).toBe(false);
    await until(() => stack!.hub!.providers()[0]!.models.includes(model), 'models announced again');
  });
});
