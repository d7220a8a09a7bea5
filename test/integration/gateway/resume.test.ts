// stream-v1 resume and idempotency: a client that drops at a random point and resumes gets the complete
// text exactly once; generation goes on while it is away; tokens are signed, scoped to their key and expire.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { keyIdOf } from '../../../src/core/gateway/keys';
import { loadResumeKey, ResumeTokens } from '../../../src/core/gateway/resume-token';
import { generatedText } from '../../support/traces';
import { engineStalled } from '../../support/gateway/engine-stall';
import { JsonSocket } from '../../support/gateway/json-socket';
import { rigPerTest, type Rig } from '../../support/gateway/rig';
import { collect, startMsg } from '../../support/gateway/stream-client';

const gw = rigPerTest();

async function open(r: Rig, key = r.key): Promise<JsonSocket> {
  return gw.open(r.ws(`/v1/stream?api_key=${key}`), 'stream-v1');
}

function finished(r: Rig, requestId: string): Promise<void> {
  const id = `test/${requestId}`;
  if (r.book.get(id)?.finishedAt !== undefined) return Promise.resolve();
  return new Promise((resolve) => {
    const on = (rec: { requestId: string }) => {
      if (rec.requestId !== id) return;
      r.book.off('finished', on);
      resolve();
    };
    r.book.on('finished', on);
  });
}

describe('stream-v1 resume', () => {
  it('drops at random points and resumes: every delta arrives exactly once, nothing lost', async () => {
    const n = 150;
    const rig = await gw.start({ engine: { mode: { generate: n, delayMs: 1 } } });
    for (let round = 0; round < 4; round++) {
      const k = 1 + Math.floor(Math.random() * (n - 10));
      const a = await open(rig);
      const start = startMsg({ params: {} });
      const id = start.request_id as string;
      a.send(start);
      const first = await collect(a, id, { stopAfter: k });
      a.ws.terminate(); // abrupt: no close frame, acks in flight may be lost
      const b = await open(rig);
      b.send({ type: 'start', resume_token: first.lastToken });
      const resumed = await b.type('started');
      expect(resumed, `round ${round}, dropped after ${k}`).toMatchObject({ request_id: id, resumed: true, from_seq: k + 1 });
      const rest = await collect(b, id);
      expect(rest.terminal, `round ${round}, dropped after ${k}`).toMatchObject({ type: 'complete', seq: n + 1 });
      expect([...first.seqs, ...rest.seqs], `round ${round}, dropped after ${k}`).toEqual(Array.from({ length: n }, (_, i) => i + 1));
      expect(first.text + rest.text).toBe(generatedText(n));
    }
    expect(rig.engine.requests).toHaveLength(4);
  });

  it('generation keeps running while the client is away; the resumed client gets the rest from retention', async () => {
    const n = 60;
    const rig = await gw.start({ engine: { mode: { generate: n } } });
    const a = await open(rig);
    const start = startMsg({ params: {} });
    const id = start.request_id as string;
    a.send(start);
    const first = await collect(a, id, { stopAfter: 3 });
    const done = finished(rig, id);
    a.ws.terminate();
    await done;
    expect(rig.book.get(`test/${id}`)?.status).toBe('ok');
    const b = await open(rig);
    b.send({ type: 'start', resume_token: first.lastToken });
    const rest = await collect(b, id);
    expect(first.text + rest.text).toBe(generatedText(n));
    expect([...first.seqs, ...rest.seqs]).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    expect(rig.engine.requests).toHaveLength(1);
  });

  it('while away, the retention cap pauses the engine; resuming lets it continue with no gap', async () => {
    const rig = await gw.start({ engine: { mode: { generate: 100_000 } }, gateway: { retentionBytes: 8 * 1024 } });
    const a = await open(rig);
    const start = startMsg({ params: {} });
    const id = start.request_id as string;
    a.send(start);
    const first = await collect(a, id, { stopAfter: 2 });
    a.ws.terminate();
    const written = await engineStalled(rig.engine);
    expect(written).toBeLessThan(100_000);
    const b = await open(rig);
    b.send({ type: 'start', resume_token: first.lastToken });
    const rest = await collect(b, id, { stopAfter: 200 });
    expect([...first.seqs, ...rest.seqs]).toEqual(Array.from({ length: 202 }, (_, i) => i + 1));
    expect(first.text + rest.text).toBe(generatedText(202));
    // 200 deltas is far more than the 8 KB kept while away: reading from the engine resumed.
    expect(rest.deltas.map((d) => JSON.stringify(d).length).reduce((x, y) => x + y, 0)).toBeGreaterThan(8 * 1024);
    b.send({ type: 'cancel', request_id: id });
    await rig.engine.waitForAbort(1);
  });

  it('a repeated start with the same request_id attaches to the running request and never starts a second one', async () => {
    const n = 80;
    const rig = await gw.start({ engine: { mode: { generate: n, delayMs: 1 } } });
    // Twice on the same connection: one stream, no repeats.
    const s = await open(rig);
    const start = startMsg({ params: {} });
    s.send(start);
    s.send(start);
    const once = await collect(s, start.request_id as string);
    expect(once.text).toBe(generatedText(n));
    expect(once.seqs).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    expect(s.messages.filter((m) => m.type === 'started')).toHaveLength(2);
    expect(rig.engine.requests).toHaveLength(1);

    // From a new connection after a drop, without the token: it continues after the last acked seq.
    const a = await open(rig);
    const again = startMsg({ params: {} });
    const id = again.request_id as string;
    a.send(again);
    const first = await collect(a, id, { stopAfter: 10 });
    a.ws.terminate();
    const b = await open(rig);
    b.send(again);
    const started = await b.type('started');
    const rest = await collect(b, id);
    // Acks still in flight at the drop may make a few deltas come again; seq tells the client which.
    expect(started.from_seq as number).toBeLessThanOrEqual(11);
    const bySeq = new Map<number, string>();
    for (const d of [...first.deltas, ...rest.deltas]) bySeq.set(d.seq as number, d.text_chunk as string);
    expect([...bySeq.keys()].sort((x, y) => x - y)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    expect(
      [...bySeq.entries()]
        .sort((x, y) => x[0] - y[0])
        .map((e) => e[1])
        .join(''),
    ).toBe(generatedText(n));
    expect(rest.seqs[0]).toBe(started.from_seq);
    expect(rig.engine.requests).toHaveLength(2);

    // Once everything was delivered and acked, the id is spent.
    b.send({ type: 'ack', request_id: id, seq: rest.terminal.seq });
    b.send(again);
    expect(await b.type('error')).toMatchObject({ request_id: id, code: 'duplicate_request', kind: 'invalid' });
    expect(rig.engine.requests).toHaveLength(2);
  });

  it('refuses tampered, expired, foreign and stale resume tokens with clear errors', async () => {
    const rig = await gw.start({ engine: { mode: { generate: 5 } } });
    const s = await open(rig);
    const start = startMsg({ params: {} });
    const id = start.request_id as string;
    s.send(start);
    const got = await collect(s, id);
    const token = got.lastToken as string;

    const [v, body, sig] = token.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(body, 'base64url').toString()) as Record<string, unknown>;
    const forged = Buffer.from(JSON.stringify({ ...claims, s: 0 })).toString('base64url');
    s.send({ type: 'start', resume_token: `${v}.${forged}.${sig}` });
    const tampered = await s.type('error');
    expect(tampered).toMatchObject({ code: 'invalid_resume_token', kind: 'invalid', reason: 'bad_signature' });

    const signer = new ResumeTokens(loadResumeKey(rig.home));
    s.send({ type: 'start', resume_token: signer.sign({ requestId: id, keyId: keyIdOf(rig.key), lastSeq: 1, expiresAt: Date.now() - 1000 }) });
    const expired = await s.type('error');
    expect(expired).toMatchObject({ code: 'resume_token_expired', kind: 'invalid', request_id: id });
    // What to do next is in the message.
    expect(String(expired.message)).toContain('new request_id');

    s.send({ type: 'start', resume_token: signer.sign({ requestId: 'gone-long-ago', keyId: keyIdOf(rig.key), lastSeq: 3, expiresAt: Date.now() + 60_000 }) });
    expect(await s.type('error')).toMatchObject({ code: 'resume_unavailable', request_id: 'gone-long-ago' });

    s.send({ type: 'start', request_id: 'another-id', resume_token: token });
    expect(await s.type('error')).toMatchObject({ code: 'invalid_resume_token', reason: 'other_request', request_id: id });

    const otherKey = rig.keys.create('other').key;
    const o = await open(rig, otherKey);
    o.send({ type: 'start', resume_token: token });
    expect(await o.type('error')).toMatchObject({ code: 'invalid_resume_token', reason: 'other_key' });

    // A token from another gateway (another home, another signing key) is refused too.
    const foreign = new ResumeTokens(Buffer.alloc(32, 7)).sign({ requestId: id, keyId: keyIdOf(rig.key), lastSeq: 1, expiresAt: Date.now() + 60_000 });
    s.send({ type: 'start', resume_token: foreign });
    expect(await s.type('error')).toMatchObject({ code: 'invalid_resume_token', reason: 'bad_signature' });
  });

  it('a client that does not come back within the TTL has its request cancelled at the engine and forgotten', async () => {
    const rig = await gw.start({ engine: { mode: { generate: 100_000, delayMs: 5 } }, gateway: { resumeTtlMs: 300 } });
    const a = await open(rig);
    const start = startMsg({ params: {} });
    const id = start.request_id as string;
    a.send(start);
    await collect(a, id, { stopAfter: 1 });
    a.ws.terminate();
    await rig.engine.waitForAbort(1);
    const signer = new ResumeTokens(loadResumeKey(rig.home));
    const b = await open(rig);
    b.send({ type: 'start', resume_token: signer.sign({ requestId: id, keyId: keyIdOf(rig.key), lastSeq: 1, expiresAt: Date.now() + 60_000 }) });
    expect(await b.type('error')).toMatchObject({ code: 'resume_unavailable', request_id: id });
  });

  it('resume tokens survive a gateway restart with the same home; retained state does not', async () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-gateway-restart-'));
    try {
      let rig = await gw.start({ home, engine: { mode: { generate: 3 } } });
      const key = rig.key;
      const s = await open(rig);
      const start = startMsg({ params: {} });
      s.send(start);
      const got = await collect(s, start.request_id as string);
      await gw.close();
      rig = await gw.start({ home, engine: { mode: { generate: 3 } } });
      const s2 = await open(rig, key);
      s2.send({ type: 'start', resume_token: got.lastToken });
      // The signature checks out (same key file); the request itself is gone.
      expect(await s2.type('error')).toMatchObject({ code: 'resume_unavailable', request_id: start.request_id });
      expect(fs.statSync(path.join(home, 'gateway-resume.key')).mode & 0o777).toBe(0o600);
    } finally {
      await gw.close();
      fs.rmSync(home, { recursive: true, force: true });
    }
  });
});
