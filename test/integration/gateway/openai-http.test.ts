// GET /v1/models and POST /v1/chat/completions with the official `openai` npm client, plus the raw
// HTTP cases a client library hides (errors, origin, bodies).
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { generatedText, summarizeTrace } from '../../support/traces';
import { MODEL, rigPerTest, type Rig } from '../../support/gateway/rig';

const gw = rigPerTest();

const client = (r: Rig, key = r.key) => new OpenAI({ apiKey: key, baseURL: `${r.gateway.url}/v1`, maxRetries: 0, timeout: 10_000 });

describe('OpenAI-compatible HTTP', () => {
  it('lists the enabled models', async () => {
    const rig = await gw.start();
    const list = await client(rig).models.list();
    expect(list.data.map((m) => m.id)).toEqual([MODEL]);
    expect((await client(rig).models.retrieve(MODEL)).id).toBe(MODEL);
  });

  it('streams chat completions over SSE, with usage when asked', async () => {
    const rig = await gw.start({ engine: { mode: { generate: 7 } } });
    const stream = await client(rig).chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'count' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe(generatedText(7));
    expect(usage).toMatchObject({ prompt_tokens: 8, completion_tokens: 7 });
    expect(rig.book.list()[0]).toMatchObject({ source: 'local', model: MODEL, status: 'ok', tokensOut: 7 });
  });

  it('answers non-stream chat completions with the engine JSON', async () => {
    const rig = await gw.start();
    const r = await client(rig).chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], temperature: 0.2 });
    expect(r.choices[0]?.message.content).toBe(summarizeTrace('vllm-chat-basic.sse').text);
    expect(rig.engine.requests.at(-1)?.body).toMatchObject({ model: 'Qwen/Qwen3-0.6B', temperature: 0.2 });
  });

  it('turns errors into OpenAI errors the client understands', async () => {
    const rig = await gw.start({ engine: { mode: { generate: 2 } } });
    await expect(client(rig, 'sk-wrong').models.list()).rejects.toMatchObject({ status: 401, code: 'key_unknown' });
    await expect(client(rig, 'sk-wrong').models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    const noKey = await fetch(`${rig.gateway.url}/v1/models`);
    expect(noKey.status).toBe(401);
    expect(await noKey.json()).toMatchObject({ error: { code: 'key_missing', type: 'authentication_error' } });
    await expect(client(rig).chat.completions.create({ model: 'nope', messages: [{ role: 'user', content: 'hi' }] })).rejects.toBeInstanceOf(
      OpenAI.NotFoundError,
    );
    await expect(client(rig).chat.completions.create({ model: MODEL, messages: [] })).rejects.toBeInstanceOf(OpenAI.BadRequestError);
    const post = (body: string, headers: Record<string, string> = {}) =>
      fetch(`${rig?.gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${rig?.key}`, 'content-type': 'application/json', ...headers },
        body,
      });
    const bad = await post('{"model":');
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { code: 'invalid_json', type: 'invalid_request_error' } });
    const evil = await post(JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] }), { origin: 'https://evil.example' });
    expect(evil.status).toBe(403);
    expect(await evil.json()).toMatchObject({ error: { code: 'origin_not_allowed' } });
    const huge = await post(JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'x'.repeat(1024 * 1024) }] }));
    expect(huge.status).toBe(413);
    expect((await fetch(`${rig.gateway.url}/v1/embeddings`, { method: 'POST' })).status).toBe(404);
    expect(rig.engine.requests).toHaveLength(0);
  });

  it('an engine failing mid-stream ends the SSE with an error event', async () => {
    const rig = await gw.start({ engine: { mode: { generate: 50, dropAfterEvents: 5 } } });
    const stream = await client(rig).chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], stream: true });
    let text = '';
    const consume = async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    };
    await expect(consume()).rejects.toThrow();
    expect(text).toBe(generatedText(4));
    expect(rig.book.list()[0]).toMatchObject({ status: 'error' });
  });

  it('a client that goes away cancels the request at the engine', async () => {
    const rig = await gw.start({ engine: { mode: { generate: 100_000, delayMs: 2 } } });
    const ac = new AbortController();
    const stream = await client(rig).chat.completions.create(
      { model: MODEL, messages: [{ role: 'user', content: 'hi' }], stream: true },
      { signal: ac.signal },
    );
    const read = (async () => {
      let n = 0;
      for await (const _chunk of stream) if (++n === 3) ac.abort();
    })();
    // openai@6 ends the iteration quietly on abort (older versions threw): either way it settles.
    await read.catch(() => undefined);
    await rig.engine.waitForAbort(1);
  });
});
