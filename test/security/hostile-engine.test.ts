// A hostile engine against a CLI-run agent: answers nested deep (a non-streaming one ~6,000 deep once
// stopped the agent while it was encoded for the hub), streams with a deep or a 3 MB event, 3 million keys,
// garbage. Each hub request ends with a coded error on its result path, the request id intact; the gateway
// answers its client the same way; the agent stays up, registered and serving.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOSTILE_MODELS } from './support/hostile-engine';
import { expectUnharmed, startRig, type Rig } from './support/rig';

let rig: Rig;
beforeAll(async () => {
  rig = await startRig();
}, 60_000);
afterAll(async () => {
  await rig?.close();
});

let n = 0;

describe('a hostile engine', () => {
  it('a non-streaming answer nested ~6,000 deep: the hub gets a 502 for that request; the agent stays up', async () => {
    const { end } = await rig.hub.inference(`engine-deep-${n++}`, HOSTILE_MODELS.deepAnswer, false);
    expect(end.type).toBe('ack');
    expect(end.payload?.status_code).toBe(502);
    expect(String(end.payload?.error)).toMatch(/refused/);
    await expectUnharmed(rig, 'a deeply nested engine answer');
  });

  it('the same answers through the gateway are coded errors for that client only', async () => {
    for (const model of [HOSTILE_MODELS.deepAnswer, HOSTILE_MODELS.garbage]) {
      const res = await fetch(`http://127.0.0.1:${rig.gatewayPort}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${rig.gatewayKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], stream: false }),
      });
      expect(res.status, model).toBe(502);
      const body = (await res.json()) as { error?: { code?: string } };
      expect(body.error?.code, model).toBeTruthy();
    }
    await expectUnharmed(rig, 'hostile engine answers through the gateway');
  });

  it('streams with a deep event, a 3 MB event or garbage end with an error on their result path', async () => {
    for (const model of [HOSTILE_MODELS.deepStream, HOSTILE_MODELS.hugeEvent, HOSTILE_MODELS.garbage]) {
      const id = `engine-stream-${n++}`;
      const { end } = await rig.hub.inference(id, model, true);
      expect(end.type, model).toBe('stream_end');
      expect(end.payload?.status_code, model).toBeGreaterThanOrEqual(400);
      expect(end.request_id).toBe(id);
    }
    await expectUnharmed(rig, 'hostile engine streams');
  });

  it('an answer of 3 million keys (33 MB) is refused, not held', async () => {
    const { end } = await rig.hub.inference(`engine-wide-${n++}`, HOSTILE_MODELS.wideAnswer, false, 60_000);
    expect(end.payload?.status_code).toBe(502);
    await expectUnharmed(rig, 'a 33 MB engine answer');
  }, 90_000);

  it('ten deep answers at once', async () => {
    const ends = await Promise.all(Array.from({ length: 10 }, () => rig.hub.inference(`engine-many-${n++}`, HOSTILE_MODELS.deepAnswer, false)));
    for (const { end } of ends) expect(end.payload?.status_code).toBe(502);
    await expectUnharmed(rig, 'ten deep engine answers at once');
  });
});
