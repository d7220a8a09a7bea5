// Pushes wait for the renderer: batches are held (bounded) until ready, then delivered in order.
import { describe, expect, it } from 'vitest';
import type { BridgeEvent } from '../../src/shared/bridge/events';
import { createEventGate } from '../../src/main/event-gate';

const log = (n: number): BridgeEvent => ({ type: 'log', entry: { ts: n, level: 'info', subsystem: 't', msg: `m${n}` } });
const text = (id: string, delta: string): BridgeEvent => ({ type: 'request.text', id, delta });

describe('event gate', () => {
  it('holds batches until ready, then delivers them once, in order, and later ones directly', () => {
    const sent: BridgeEvent[][] = [];
    const gate = createEventGate((b) => sent.push(b));
    gate.push([log(1), log(2)]);
    gate.push([text('r1', 'Hel')]);
    expect(sent).toEqual([]);
    expect(gate.pending).toBe(3);
    gate.setReady(true);
    expect(sent).toEqual([[log(1), log(2), text('r1', 'Hel')]]);
    expect(gate.pending).toBe(0);
    gate.push([text('r1', 'lo')]);
    expect(sent[1]).toEqual([text('r1', 'lo')]);
  });

  it('holds again after the page goes away (reload) and keeps only the newest snapshot', () => {
    const sent: BridgeEvent[][] = [];
    const gate = createEventGate((b) => sent.push(b));
    gate.setReady(true);
    gate.setReady(false);
    const snap = (name: string) => ({ type: 'snapshot', snapshot: { nodeName: name } }) as unknown as BridgeEvent;
    gate.push([snap('a'), log(1)]);
    gate.push([snap('b')]);
    expect(sent).toEqual([]);
    gate.setReady(true);
    expect(sent).toEqual([[log(1), snap('b')]]);
  });

  it('bounds what it holds, dropping the oldest', () => {
    const sent: BridgeEvent[][] = [];
    const gate = createEventGate((b) => sent.push(b), 3);
    gate.push([log(1), log(2)]);
    gate.push([log(3), log(4), log(5)]);
    expect(gate.pending).toBe(3);
    gate.setReady(true);
    expect(sent).toEqual([[log(3), log(4), log(5)]]);
  });

  it('sends nothing after close and ignores empty batches', () => {
    const sent: BridgeEvent[][] = [];
    const gate = createEventGate((b) => sent.push(b));
    gate.setReady(true);
    gate.push([]);
    gate.close();
    gate.push([log(1)]);
    gate.setReady(true);
    expect(sent).toEqual([]);
    expect(gate.ready).toBe(false);
  });
});
