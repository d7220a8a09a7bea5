// SnapshotEvents: many changes in a moment make one snapshot, within 100 ms; none is built unheard; close()
// drops what is pending.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SNAPSHOT_EVERY_MS, SnapshotEvents } from '../../../src/core/bridge/snapshot-events';
import type { AgentSnapshot } from '../../../src/shared/views/snapshot';

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

function events(listening = true) {
  let built = 0;
  const sent: AgentSnapshot[] = [];
  const state = { listening };
  const s = new SnapshotEvents(
    () => ({ nodeName: `snap ${++built}` }) as AgentSnapshot,
    (snap) => sent.push(snap),
    () => state.listening,
  );
  return { s, sent, state, built: () => built };
}

describe('SnapshotEvents', () => {
  it('coalesces the changes of one moment into one snapshot, built when it goes out', () => {
    const { s, sent, built } = events();
    s.changed();
    s.changed();
    s.changed();
    vi.advanceTimersByTime(SNAPSHOT_EVERY_MS - 1);
    expect(sent).toHaveLength(0);
    vi.advanceTimersByTime(1);
    expect(sent.map((x) => x.nodeName)).toEqual(['snap 1']);
    expect(built()).toBe(1);
    s.changed();
    vi.advanceTimersByTime(SNAPSHOT_EVERY_MS);
    expect(sent.map((x) => x.nodeName)).toEqual(['snap 1', 'snap 2']);
  });

  it('builds nothing while nobody listens', () => {
    const { s, sent, state, built } = events(false);
    s.changed();
    vi.advanceTimersByTime(SNAPSHOT_EVERY_MS * 3);
    expect(sent).toHaveLength(0);
    expect(built()).toBe(0);
    state.listening = true;
    s.changed();
    vi.advanceTimersByTime(SNAPSHOT_EVERY_MS);
    expect(sent).toHaveLength(1);
  });

  it('close() drops the pending snapshot', () => {
    const { s, sent } = events();
    s.changed();
    s.close();
    vi.advanceTimersByTime(SNAPSHOT_EVERY_MS * 2);
    expect(sent).toHaveLength(0);
  });
});
