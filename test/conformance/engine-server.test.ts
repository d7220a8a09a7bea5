// The test engine itself: it must serve the traces byte for byte and its failure modes must be real.
import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestEngine, type TestEngine } from '../support/engine-server';
import { readTrace, splitEvents } from '../support/traces';

let engines: TestEngine[] = [];
afterEach(async () => {
  await Promise.all(engines.map((e) => e.close()));
  engines = [];
});
async function start(...args: Parameters<typeof startTestEngine>): Promise<TestEngine> {
  const e = await startTestEngine(...args);
  engines.push(e);
  return e;
}
const post = (url: string, body: unknown, signal?: AbortSignal) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal });

describe('test engine', () => {
  it('serves a trace byte for byte and records the request', async () => {
    const e = await start({ traces: { m: 'tgi-chat-keepalive-midstream-error.sse' }, mode: { delayMs: 2 } });
    const res = await post(`${e.url}/v1/chat/completions`, { model: 'm', stream: true, messages: [] });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const got = Buffer.from(await res.arrayBuffer());
    expect(got.equals(readTrace('tgi-chat-keepalive-midstream-error.sse'))).toBe(true);
    expect(e.requests[0]?.body).toEqual({ model: 'm', stream: true, messages: [] });
    expect(e.eventsWritten).toBe(splitEvents(readTrace('tgi-chat-keepalive-midstream-error.sse')).length);
  });

  it('splitEvents keeps every byte and cuts after blank lines (LF and CRLF)', () => {
    const buf = Buffer.from('data: a\n\n:\n\ndata: b\r\n\r\ndata: c');
    const parts = splitEvents(buf).map((b) => b.toString());
    expect(parts).toEqual(['data: a\n\n', ':\n\n', 'data: b\r\n\r\n', 'data: c']);
  });

  it('answers non-stream requests with JSON built from the trace', async () => {
    const e = await start();
    const res = await post(`${e.url}/v1/chat/completions`, { model: 'x', messages: [] });
    const json = (await res.json()) as { choices: { message: { content: string } }[]; usage?: unknown };
    expect(json.choices[0]?.message.content).toBe('Okay. Sure.');
    expect(json.usage).toBeUndefined();
    const c = await post(`${e.url}/v1/completions`, { model: 'x', prompt: 'hi' });
    expect(await c.json()).toMatchObject({
      object: 'text_completion',
      choices: [{ text: "! I'm a student" }],
      usage: { prompt_tokens: 12, completion_tokens: 5 },
    });
  });

  it('identity endpoints per engine type', async () => {
    const o = await start({ engineType: 'ollama' });
    expect(await (await fetch(`${o.url}/`)).text()).toBe('Ollama is running');
    expect(await (await fetch(`${o.url}/api/tags`)).json()).toMatchObject({ models: [{ name: 'gemma3:4b' }] });
    const lm = await start({ engineType: 'lmstudio' });
    const unknown = await fetch(`${lm.url}/get_server_args`);
    expect(unknown.status).toBe(200);
    const v = await start({ engineType: 'vllm', version: '9.9.9' });
    expect(await (await fetch(`${v.url}/version`)).json()).toEqual({ version: '9.9.9' });
    expect((await fetch(`${v.url}/get_server_args`)).status).toBe(404);
  });

  it('goes down and comes back on the same port', async () => {
    const e = await start();
    const port = e.port;
    await e.setMode('down');
    await expect(fetch(`${e.url}/v1/models`)).rejects.toThrow();
    await e.setMode('ok');
    expect(e.port).toBe(port);
    expect((await fetch(`${e.url}/v1/models`)).status).toBe(200);
  });

  it('counts a client abort while hanging', async () => {
    const e = await start({ mode: 'hang' });
    const ac = new AbortController();
    const p = post(`${e.url}/v1/chat/completions`, { model: 'x', stream: true }, ac.signal);
    await e.waitForRequests(1);
    ac.abort();
    await expect(p).rejects.toThrow();
    await e.waitForAbort(1);
    expect(e.requests[0]?.aborted).toBe(true);
  });

  it('generate mode pauses on backpressure when the client stops reading', async () => {
    const e = await start({ mode: { generate: 1_000_000 } });
    const req = http.request(`${e.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' } });
    req.end(JSON.stringify({ model: 'x', stream: true }));
    const res = await new Promise<http.IncomingMessage>((r) => req.on('response', r));
    res.pause();
    await e.waitForBackpressure();
    const written = e.eventsWritten;
    expect(written).toBeLessThan(1_000_000);
    req.destroy();
    await e.waitForAbort(1);
  });
});
