// A hostile hub against a CLI-run agent: frames nested deep, oversized, with huge key counts, malformed,
// and floods of each. The agent answers what it can with the request id, drops the rest, stays up and
// registered, keeps serving ordinary requests, and its console keeps answering.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectUnharmed, logged, startRig, type Rig } from './support/rig';
import { SAFE_MODEL } from './support/hostile-engine';

let rig: Rig;
beforeAll(async () => {
  rig = await startRig();
}, 60_000);
afterAll(async () => {
  await rig?.close();
});

const deepArray = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
const deepObject = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;

describe('a hostile hub', () => {
  it('a notice whose details nest 5,000 arrays deep (10 KB) is refused; the agent stays up', async () => {
    await rig.hub.sendRaw(`{"type":"notice","payload":{"event":"reputation_dropped","severity":"critical","message":"x","details":${deepArray(5000)}}}`);
    await rig.hub.sendRaw(`{"type":"notice","payload":{"event":"reputation_dropped","severity":"critical","message":"x","details":{"a":${deepObject(5000)}}}}`);
    // Refused unread by the bounded reader, not caught later by a boundary.
    await logged(rig, 'too_deep', /refused unread/);
    await expectUnharmed(rig, 'a deeply nested notice');
  });

  it('an inference nested deep is refused on its result path with its request id', async () => {
    const from = rig.hub.frames.length;
    await rig.hub.sendRaw(
      `{"type":"inference","request_id":"deep-1","payload":{"model_id":"${SAFE_MODEL}","stream":true,"request":{"model":"${SAFE_MODEL}","messages":${deepArray(20_000)}}}}`,
    );
    const end = await rig.hub.waitFor((f) => f.request_id === 'deep-1' && f.type === 'stream_end', 'the refusal of deep-1', 10_000, from);
    expect(end.payload?.status_code).toBe(400);
    // Just past the request limit (64), within the frame limit: refused by its own check, with the id too.
    await rig.hub.sendRaw(
      `{"type":"inference","request_id":"deep-2","payload":{"model_id":"${SAFE_MODEL}","stream":false,"request":{"model":"${SAFE_MODEL}","messages":[{"role":"user","content":"x","x":${deepArray(80)}}]}}}`,
    );
    const end2 = await rig.hub.waitFor((f) => f.request_id === 'deep-2' && f.type === 'ack', 'the refusal of deep-2', 10_000, from);
    expect(end2.payload?.status_code).toBe(400);
    await expectUnharmed(rig, 'deeply nested inferences');
  });

  it('every message type nested deep, with many keys, or as garbage, is dropped without harm', async () => {
    for (const type of ['ack', 'error', 'cancel', 'resume', 'warmup', 'verify', 'benchmark', 'notice', 'no_such_type']) {
      await rig.hub.sendRaw(`{"type":"${type}","request_id":"x-${type}","payload":${deepObject(3000)}}`);
      await rig.hub.sendRaw(
        `{"type":"${type}","request_id":"k-${type}","payload":{${Array.from({ length: 120_000 }, (_, i) => `"k${i}":0`).join(',')}}}`.slice(0, 1_000_000),
      );
    }
    for (const junk of ['', 'null', '[]', '"x"', '{', '\u0000\u0001', '{"type":null}', `{"type":"${'a'.repeat(100_000)}"}`, Buffer.from([0xff, 0xfe, 0x00])])
      await rig.hub.sendRaw(junk);
    await expectUnharmed(rig, 'deep, wide and garbage frames of every type');
  });

  it('a flood of 3,000 malformed and deep frames in one burst', async () => {
    const sends: Promise<void>[] = [];
    for (let i = 0; i < 1000; i++) {
      sends.push(rig.hub.sendRaw(`{"type":"notice","payload":{"event":"e","message":"m","details":${deepArray(500)}}}`));
      sends.push(rig.hub.sendRaw('{"type":'));
      sends.push(rig.hub.sendRaw(`{"type":"inference","request_id":"flood-${i}","payload":{"model_id":"no-such-model","request":{}}}`));
    }
    await Promise.all(sends);
    await expectUnharmed(rig, 'a flood of hostile frames');
  }, 60_000);

  it('a frame over the 1 MB message limit ends that connection only; the agent redials and registers again', async () => {
    // A register on a new connection: the agent may re-register on the old one meanwhile (a model withdrawn),
    // and a request sent on the socket that is closing is lost with it.
    const before = rig.hub.registeredConnections;
    await rig.hub.sendRaw(`{"type":"notice","payload":{"event":"e","message":"${'x'.repeat(1_100_000)}"}}`).catch(() => undefined);
    await rig.hub.waitFor((f) => f.type === 'register' && rig.hub.registeredConnections > before, 'a register on a new connection', 20_000);
    await expectUnharmed(rig, 'an oversized frame');
  }, 40_000);
});
