// /v1/ws, seed 002's relay dialect: the seed's own Python (`websockets`) and Node (`ws`) examples run
// unchanged as child processes (only URL and key swapped), then the rest of the protocol with a ws client.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot, summarizeTrace } from '../../support/traces';
import { JsonSocket } from '../../support/gateway/json-socket';
import { MODEL, rigPerTest, type Rig } from '../../support/gateway/rig';
import { NODE_EXAMPLE, PYTHON_EXAMPLE, BROWSER_EXAMPLE, withUrl } from '../../support/gateway/seed-002-examples';

const gw = rigPerTest();

const TEXT = summarizeTrace('vllm-chat-basic.sse').text;

function run(cmd: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { cwd: repoRoot, timeout: 15_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, stdout, stderr });
    });
  });
}

async function open(r: Rig, query = `?apiKey=${r.key}`, protocols?: string | string[], opts?: Parameters<typeof JsonSocket.open>[2]): Promise<JsonSocket> {
  return gw.open(r.ws(`/v1/ws${query}`), protocols, opts);
}

const chat = (over: Record<string, unknown> = {}) => ({
  type: 'chat.message',
  model: MODEL,
  messages: [{ role: 'user', content: 'Tell me a joke' }],
  stream: true,
  ...over,
});

describe('seed 002 examples, run as written', () => {
  // The seed 002 text, copied into the repo (test/fixtures/seeds/README.md says from where).
  const seedsDir = path.join(repoRoot, 'test', 'fixtures', 'seeds');
  it('the examples under test are the seed text, byte for byte', () => {
    const file = fs.readdirSync(seedsDir).find((f) => f.startsWith('002_')) as string;
    const seed = fs.readFileSync(path.join(seedsDir, file), 'utf8');
    for (const ex of [PYTHON_EXAMPLE, NODE_EXAMPLE, BROWSER_EXAMPLE]) expect(seed.includes(ex)).toBe(true);
  });

  it('the Python websockets example prints the answer and "Complete!"', async () => {
    const rig = await gw.start();
    const r = await run('/usr/bin/python3', ['-c', withUrl(PYTHON_EXAMPLE, rig.ws(`/v1/ws?apiKey=${rig.key}`))]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${TEXT}\nComplete!\n`);
    expect(rig.engine.requests.at(-1)?.body).toMatchObject({ model: 'Qwen/Qwen3-0.6B', stream: true, messages: [{ role: 'user', content: 'Tell me a joke' }] });
  });

  it('the Node ws example prints Connected, the answer, Complete! and Disconnected', async () => {
    const rig = await gw.start();
    const r = await run(process.execPath, ['--input-type=module', '-e', withUrl(NODE_EXAMPLE, rig.ws(`/v1/ws?apiKey=${rig.key}`))]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`Connected\n${TEXT}\nComplete!\nDisconnected\n`);
  });
});

describe('/v1/ws protocol', () => {
  it('streams chat.chunk {content, done:false, request_id} then a final done chunk with usage; ping answers pong', async () => {
    const rig = await gw.start({ engine: { chatTrace: 'vllm-chat-reasoning-include-usage.sse' } });
    const s = await open(rig);
    expect(s.ws.extensions).toContain('permessage-deflate');
    s.send({ type: 'ping' });
    const pong = await s.type('pong');
    expect(Math.abs((pong.timestamp as number) - Date.now())).toBeLessThan(5000);
    s.send(chat({ request_id: 'joke-1' }));
    const done = await s.waitFor((m) => m.type === 'chat.chunk' && m.done === true);
    const chunks = s.messages.filter((m) => m.type === 'chat.chunk');
    expect(chunks.every((c) => c.request_id === 'joke-1')).toBe(true);
    const expected = summarizeTrace('vllm-chat-reasoning-include-usage.sse');
    expect(chunks.map((c) => c.content).join('')).toBe(expected.text);
    expect(chunks.map((c) => c.reasoning ?? '').join('')).toBe(expected.reasoning);
    expect(done).toMatchObject({
      content: '',
      finish_reason: expected.finishReason,
      usage: { prompt_tokens: expected.usage?.prompt_tokens, completion_tokens: expected.usage?.completion_tokens },
    });
  });

  it('stream:false answers one chat.complete {content, usage}; a request id is made up when none is given', async () => {
    const rig = await gw.start();
    const s = await open(rig);
    s.send(chat({ stream: false }));
    const c = await s.type('chat.complete');
    expect(c.content).toBe(summarizeTrace('vllm-chat-basic.sse').text);
    expect(typeof c.request_id).toBe('string');
    expect(c.usage).toMatchObject({ prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number) });
    expect(rig.engine.requests.at(-1)?.body).toMatchObject({ stream: false });
  });

  it('authenticates with the subprotocol pair; refuses a missing or wrong key with auth_error', async () => {
    const rig = await gw.start({ engine: { mode: { generate: 2 } } });
    const viaProto = await open(rig, '', ['access_token', rig.key]);
    expect(viaProto.ws.protocol).toBe('access_token');
    viaProto.send(chat());
    expect(await viaProto.waitFor((m) => m.done === true)).toMatchObject({ type: 'chat.chunk' });

    const none = await open(rig, '');
    expect(await none.type('error')).toMatchObject({ code: 'auth_error', reason: 'key_missing' });
    expect((await none.closed).code).toBe(1008);
    const wrong = await open(rig, '?apiKey=sk-test-123');
    expect(await wrong.type('error')).toMatchObject({ code: 'auth_error', reason: 'key_unknown' });
    expect((await wrong.closed).code).toBe(1008);
  });

  it('cancel stops the engine and ends the stream with a done chunk marked cancelled', async () => {
    const rig = await gw.start({ engine: { mode: { generate: 100_000, delayMs: 2 } } });
    const s = await open(rig);
    s.send(chat({ request_id: 'long' }));
    await s.waitFor((m) => m.type === 'chat.chunk' && m.request_id === 'long');
    s.send({ type: 'cancel', request_id: 'long' });
    expect(await s.waitFor((m) => m.done === true)).toMatchObject({ request_id: 'long', finish_reason: 'cancelled' });
    await rig.engine.waitForAbort(1);
    s.send({ type: 'cancel', request_id: 'long' });
    expect(await s.type('error')).toMatchObject({ code: 'invalid_request', request_id: 'long' });
  });

  it('closing the socket cancels its running requests at the engine', async () => {
    const rig = await gw.start({ engine: { mode: { generate: 100_000, delayMs: 2 } } });
    const s = await open(rig);
    s.send(chat());
    await s.type('chat.chunk');
    s.ws.close();
    await rig.engine.waitForAbort(1);
  });

  it('malformed input gets invalid_request, an engine failure provider_error; the connection survives', async () => {
    const rig = await gw.start({ engine: { mode: { status: 500 } } });
    const s = await open(rig);
    const cases: Array<[unknown, RegExp]> = [
      ['nope', /not valid JSON/],
      [{ type: 'chat.message', model: MODEL }, /messages/],
      [{ type: 'chat.message', model: MODEL, messages: [] }, /messages: Too small/],
      [{ type: 'chat.message', model: MODEL, messages: [{ role: 'user', content: 'x' }], temperature: 'hot' }, /temperature/],
      [{ type: 'chat.message', model: 'gpt-7', messages: [{ role: 'user', content: 'x' }] }, /Model "gpt-7" is not served.*gemini-2\.5-pro/],
      [{ type: 'subscribe' }, /Unknown message type "subscribe".*chat\.message, ping, cancel/],
    ];
    for (const [msg, text] of cases) {
      s.send(msg);
      const e = await s.type('error');
      expect(e.code, JSON.stringify(msg)).toBe('invalid_request');
      expect(String(e.message), JSON.stringify(msg)).toMatch(text);
    }
    s.send(chat({ request_id: 'boom' }));
    expect(await s.type('error')).toMatchObject({ code: 'provider_error', request_id: 'boom' });
    s.send({ type: 'ping' });
    await s.type('pong');
  });

  it('closes an idle connection (seed 002 websocket_timeout)', async () => {
    const rig = await gw.start({ gateway: { idleTimeoutMs: 200 } });
    const idle = await open(rig);
    const closed = await idle.closed;
    expect(closed.code).toBe(1000);
    expect(closed.reason).toContain('idle');
  });

  // Its own gateway with the usual idle timeout: on a busy machine sending 1 MB can take longer than 200 ms.
  it('refuses messages over 1 MB', async () => {
    const rig = await gw.start();
    const big = await open(rig);
    big.send(chat({ messages: [{ role: 'user', content: 'x'.repeat(1024 * 1024) }] }));
    expect((await big.closed).code).toBe(1009);
  });

  it('websocket_auth off works without a key on loopback, with a loud warning in the log', async () => {
    const rig = await gw.start({ engine: { mode: { generate: 2 } }, gateway: { websocketAuth: false } });
    expect(rig.log.entries().some((e) => e.level === 'warn' && e.msg.includes('WITHOUT an API key'))).toBe(true);
    const s = await open(rig, '');
    s.send(chat());
    expect(await s.waitFor((m) => m.done === true)).toMatchObject({ type: 'chat.chunk', finish_reason: 'stop' });
  });
});
