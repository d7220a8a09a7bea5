// Engines that fail the way real ones do, through the whole stack (dev hub, agent, test engines):
// failover to another endpoint, fast recovery, an engine refusing the provider's key, delivered-token
// counts of a cancelled stream, and the client's model id in answers. (The live suite in test/live does
// the same against the real llama-server.)
import { afterEach, describe, expect, it } from 'vitest';
import { modelOf, chat, lastStatus, requests, readSse, registered, startStack, until, type Stack } from '../../support/stack';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

const ask = (model: string, extra: Record<string, unknown> = {}) => ({ model, messages: [{ role: 'user', content: 'hi' }], ...extra });

describe('engine trouble', () => {
  it('a refused engine is out at once, its model served by the other endpoint, and back within ~1 s of answering', async () => {
    stack = await startStack({ engines: [{ mode: { generate: 5 } }, { mode: { generate: 5 } }], agent: { HealthCheckIntervalSeconds: 30, Discovery: true } });
    const [e1, e2] = stack.engines as [NonNullable<Stack['engines'][0]>, NonNullable<Stack['engines'][0]>];
    const model = e1.modelIds[0]!;
    // models.json maps the model to e1; e2 is an engine the owner added, serving the same model.
    await stack.agent.invoke('engines.addEndpoint', { url: e2.url });
    await until(() => modelOf(stack!.agent, model)?.endpoints.length === 2, 'two endpoints');
    await registered(stack);
    await e1.setMode('down');
    for (let i = 0; i < 4; i++) {
      const r = await chat(stack.hub!, ask(model, { max_tokens: 3 }));
      expect(r.status).toBe(200);
      expect(((await r.json()) as { model: string }).model).toBe(model);
    }
    const ep = () =>
      stack!.agent
        .snapshot()
        .models.find((m) => m.id === model)!
        .endpoints.find((e) => e.url === e1.url)!;
    expect(ep()).toMatchObject({ health: 'unhealthy', condition: 'down' });
    expect(modelOf(stack.agent, model)?.health).toBe('healthy');
    await e1.setMode('ok');
    const t = Date.now();
    await until(() => ep().health === 'healthy', 'e1 healthy again', 4000);
    expect(Date.now() - t).toBeLessThan(3000);
  });

  it('an engine that refuses our key: "engine refuses our key" in the console, 502 for the client, never its 401', async () => {
    stack = await startStack({ engines: [{ apiKey: 'right', mode: { generate: 3 } }], models: { m: { engine: 0, api_key: 'wrong' } } });
    await registered(stack);
    await until(() => stack!.agent.snapshot().models[0]?.endpoints[0]?.condition === 'key_rejected', 'key_rejected');
    expect(stack.agent.snapshot().models[0]!.endpoints[0]!.lastError).toMatch(/^engine refuses our key/);
    const node = stack.hub!.providers()[0]!.nodeId;
    const end = await stack.hub!.call(node, 'inference', { model_id: 'm', stream: true, request: ask('m') }, 'stream_end', 3000);
    expect(end.status_code).toBe(502);
    expect(end.error).toBe("engine rejected the provider's key");
    const ack = await stack.hub!.call(node, 'inference', { model_id: 'm', stream: false, request: ask('m') }, 'ack', 3000);
    expect(ack.status_code).toBe(502);
    expect(JSON.stringify(ack.response ?? null)).not.toContain('authentication');
  });

  it('a cancelled stream is recorded with the tokens it delivered (estimated), not 0; chunks carry the asked model id', async () => {
    stack = await startStack({ engines: [{ mode: { generate: 100_000, delayMs: 2 } }], models: { 'public-name': { engine: 0 } } });
    await registered(stack);
    const ctl = new AbortController();
    const res = await chat(stack.hub!, ask('public-name', { stream: true, max_tokens: 100_000 }), { signal: ctl.signal });
    const reader = res.body!.getReader();
    const dec = new TextDecoder();
    let text = '';
    while ((text.match(/"content":" ?tok/g) ?? []).length < 25) {
      const r = await reader.read();
      if (r.done) throw new Error(`the stream ended early: ${text.slice(-300)}`);
      text += dec.decode(r.value);
    }
    expect(text).toContain('"model":"public-name"');
    ctl.abort();
    await until(async () => (await lastStatus(stack!.agent)) === 'cancelled', 'cancelled');
    const row = (await requests(stack.agent, 1))[0]!;
    expect(row.tokensOut).toBeGreaterThanOrEqual(25);
    expect(row.estimated).toBe(true);
  });

  it('the dev hub passes the usage chunk only to a client that asked for it', async () => {
    stack = await startStack({ engines: [{ mode: { generate: 4 } }] });
    await registered(stack);
    const model = stack.engines[0]!.modelIds[0]!;
    const plain = await readSse(await chat(stack.hub!, ask(model, { stream: true })));
    expect(plain.filter((e) => typeof e === 'object' && (e as { choices: unknown[] }).choices.length === 0)).toEqual([]);
    // The provider still sent it to the hub (it bills from it).
    expect(stack.hub!.received.some((m) => m.type === 'stream_chunk' && (m.payload.chunk as { usage?: unknown } | null)?.usage)).toBe(true);
    const asked = await readSse(await chat(stack.hub!, ask(model, { stream: true, stream_options: { include_usage: true } })));
    expect(asked.at(-2)).toMatchObject({ choices: [], usage: { completion_tokens: 4 } });
  });
});
