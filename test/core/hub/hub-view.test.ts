// The hub's view from its register ack (Go TestRegisterAckRecordsHubView, TestDiffModelLists,
// TestAckPayloadDecodesHubFields): recorded when sent, kept across acks without it, clamped, logged once.
import { describe, expect, it } from 'vitest';
import { diffModelLists, HubView } from '../../../src/core/hub/hub-view';
import { memoryLog } from '../../../src/core/base/log';
import { parseInbound } from '../../../src/core/protocol/messages';

describe('HubView', () => {
  it('records registered_models and upgrade_available; a later ack without them does not erase them', () => {
    const log = memoryLog();
    const v = new HubView({ log: log.child('hub'), now: () => 1000 });
    let changes = 0;
    v.on('change', () => changes++);
    v.record({ success: true }, ['a/one', 'a/two']);
    expect(v.view()).toEqual({ notRegistered: [] });
    expect(changes).toBe(0);
    v.record({ success: true, registered_models: ['a/one', 'a/other'], upgrade_available: { running: '0.5.0', latest: '0.6.0', message: 'upgrade' } }, [
      'a/one',
      'a/two',
    ]);
    expect(v.view()).toEqual({
      registeredModels: ['a/one', 'a/other'],
      registeredAt: 1000,
      notRegistered: ['a/two'],
      upgrade: { running: '0.5.0', latest: '0.6.0', message: 'upgrade', at: 1000 },
    });
    v.record({ success: true }, ['a/one', 'a/two']);
    expect(v.view().notRegistered).toEqual(['a/two']);
    expect(v.view().upgrade?.latest).toBe('0.6.0');
    expect(changes).toBe(1);
    const warns = log.entries(50, 'warn').map((e) => e.msg);
    expect(warns.filter((m) => m.startsWith('the hub did not register the model a/two'))).toHaveLength(1);
    expect(warns.some((m) => m.includes('provider release 0.6.0 is current (this node speaks 0.5.0). The hub says: upgrade'))).toBe(true);
  });

  it('an empty registered_models is a verdict too: every announced model is unregistered', () => {
    const v = new HubView({ log: memoryLog().child('hub') });
    v.record({ success: true, registered_models: [] }, ['m']);
    expect(v.view().notRegistered).toEqual(['m']);
  });

  it('clamps what the hub sent: control characters stripped, over-long ids cut, duplicates once', () => {
    const v = new HubView({ log: memoryLog().child('hub') });
    v.record(
      { success: true, registered_models: ['m\u0000\r\n', 'm', 'x'.repeat(1000)], upgrade_available: { latest: '0.6\u0007.0', message: 'a'.repeat(5000) } },
      ['m'],
    );
    const view = v.view();
    expect(view.registeredModels?.[0]).toBe('m');
    expect(view.registeredModels).toHaveLength(2);
    expect(view.registeredModels![1]!.length).toBeLessThan(300);
    expect(view.upgrade?.latest).toBe('0.6.0');
    expect(view.upgrade!.message!.length).toBeLessThan(600);
  });

  it('diffModelLists: announced but not registered, registered but not announced', () => {
    expect(diffModelLists(['a', 'b', 'c'], ['b', 'c', 'd'])).toEqual({ missing: ['a'], extra: ['d'] });
    expect(diffModelLists(['a'], ['a'])).toEqual({ missing: [], extra: [] });
  });

  it("the ack schema reads the hub fields (Go AckPayload), and a wrong type fails the ack as Go's decoder does", () => {
    const m = parseInbound(
      JSON.stringify({
        type: 'ack',
        payload: {
          request_id: 'r',
          success: true,
          message: 'ok',
          upgrade_available: { running: '0.5.5', latest: '0.6.0', message: 'upgrade' },
          registered_models: ['x/y'],
        },
      }),
    );
    expect(m.type === 'ack' && m.payload.upgrade_available?.latest).toBe('0.6.0');
    expect(m.type === 'ack' && m.payload.registered_models).toEqual(['x/y']);
    expect(() => parseInbound(JSON.stringify({ type: 'ack', payload: { success: true, registered_models: [1] } }))).toThrow(/registered_models/);
  });
});
