// "Serve this" through the whole agent: a model pulled into Ollama for a network model (or one Ollama
// already has under its tag) is announced to the hub under the NETWORK id, and the hub's requests for
// that id reach Ollama under the tag. The mapping is models.json's, so it survives a restart. The
// engine is the Ollama stand-in (Ollama's API docs: /api/pull, /api/tags, the OpenAI-compatible /v1).
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Agent } from '../../../src/core/agent';
import { memoryLog } from '../../../src/core/base/log';
import type { DemandView } from '../../../src/shared/views/demand';
import { OllamaStandIn } from '../../support/ollama-standin';
import { PlatformApi } from '../../support/platform-api';
import { modelOf, TEST_KEY, chat, chunkText, readSse, registered, startStack, until, type Stack } from '../../support/stack';

const QWEN = 'Qwen/Qwen2.5-0.5B-Instruct';
const TAG = 'qwen2.5:0.5b';

let stack: Stack | undefined;
let api: PlatformApi;
let ollama: OllamaStandIn;
beforeEach(async () => {
  api = await PlatformApi.start(TEST_KEY);
  api.routes['/api/v1/stats/model-demand'] = { kind: 'json', body: { code: 0, data: { models: [{ model_id: QWEN, input_price: 0.05, output_price: 0.1 }] } } };
  ollama = await OllamaStandIn.start();
});
afterEach(async () => {
  await stack?.close();
  stack = undefined;
  await api.close();
  await ollama.close();
});

/** The models of the last register the hub received (the dev hub keeps them per connected provider). */
function lastRegister(s: Stack): string[] | undefined {
  return s.hub!.providers().find((p) => p.connected)?.models;
}

function registers(s: Stack): number {
  return s.hub!.providers().reduce((n, p) => n + p.registers, 0);
}

function ollamaChats(): string[] {
  return ollama.requests.filter((r) => r.path === '/v1/chat/completions').map((r) => (r.body as { model?: string }).model ?? '');
}

async function askHub(s: Stack): Promise<string> {
  const res = await chat(s.hub!, { model: QWEN, stream: true, messages: [{ role: 'user', content: 'ping' }] });
  expect(res.status).toBe(200);
  return chunkText(await readSse(res));
}

/** Polls demand.list until the pull of `model` is done (the console polls it the same way). */
async function pullFinished(s: Stack, model: string, timeoutMs = 10_000): Promise<DemandView> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const d = (await s.agent.invoke('demand.list', {})) as DemandView;
    if (d.pulls.some((p) => p.model === model && p.done)) return d;
    if (Date.now() > deadline) throw new Error(`timed out waiting for the pull of ${model}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function withOllama(): Promise<Stack> {
  const s = await startStack({ serviceUrl: api.url, engines: [] });
  await registered(s);
  await s.agent.invoke('engines.addEndpoint', { url: ollama.url });
  await until(() => s.agent.snapshot().engines.some((e) => e.type === 'ollama' && e.reachable), 'the Ollama stand-in found');
  return s;
}

describe('"serve this" announces the network id', () => {
  it('after a pull: the register lists the network id, requests reach Ollama under the tag, and a restart keeps it', async () => {
    stack = await withOllama();
    const before = (await stack.agent.invoke('demand.list', {})) as DemandView;
    expect(before.rows.map((r) => [r.modelId, r.here])).toEqual([[QWEN, 'pullable']]);

    await stack.agent.invoke('demand.pull', { engineUrl: ollama.url, model: TAG, networkId: QWEN });
    await until(() => lastRegister(stack!)?.includes(QWEN) === true, 'register lists the network id', 10_000);
    expect(lastRegister(stack)).not.toContain(TAG);
    expect(JSON.parse(fs.readFileSync(path.join(stack.home, 'models.json'), 'utf8'))).toEqual({ [QWEN]: { endpoint: ollama.url, local_model: TAG } });
    expect(((await stack.agent.invoke('demand.list', {})) as DemandView).rows[0]).toMatchObject({ modelId: QWEN, here: 'serving', sizeGb: 0.37 });

    expect(await askHub(stack)).toBe('Ping-ok.');
    expect(ollamaChats()).toEqual([TAG]);

    // Restart on the same home: models.json still maps it.
    await stack.agent.stop();
    const again = await Agent.create({
      home: stack.home,
      configPath: path.join(stack.home, 'config.toml'),
      log: memoryLog(),
      gpu: false,
      discovery: false,
      env: { PATH: process.env.PATH },
    });
    const registersBefore = registers(stack);
    await again.start();
    try {
      await until(
        () => registers(stack!) > registersBefore && lastRegister(stack!)?.includes(QWEN) === true,
        'register after restart lists the network id',
        10_000,
      );
      expect(await askHub(stack)).toBe('Ping-ok.');
      expect(ollamaChats()).toEqual([TAG, TAG]);
    } finally {
      await again.stop();
    }
  });

  it('a tag typed by hand that is not certainly the network model: pulled, not announced as it, and the bridge reply says why', async () => {
    ollama.registry['qwen2.5:1.5b'] = [986_048_768, 6_924];
    stack = await withOllama();
    const reply = (await stack.agent.invoke('demand.pull', { engineUrl: ollama.url, model: 'qwen2.5:1.5b', networkId: QWEN })) as DemandView;
    expect(reply.pulls.find((p) => p.model === 'qwen2.5:1.5b')?.notAnnounced?.code).toBe('tag_not_network_model');
    const done = await pullFinished(stack, 'qwen2.5:1.5b');
    expect(done.pulls.find((p) => p.model === 'qwen2.5:1.5b')).toMatchObject({ status: 'success', notAnnounced: { code: 'tag_not_network_model' } });
    expect(ollama.pulled).toEqual(['qwen2.5:1.5b']);
    const modelsJson = path.join(stack.home, 'models.json');
    expect(fs.existsSync(modelsJson) ? Object.keys(JSON.parse(fs.readFileSync(modelsJson, 'utf8')) as object) : []).not.toContain(QWEN);
    expect(done.rows[0]).toMatchObject({ modelId: QWEN, here: 'pullable' });
    // The engines were rescanned after the pull: the tag is there, and the hub was not told it is QWEN.
    await until(
      () => stack!.agent.snapshot().engines.some((e) => e.type === 'ollama' && e.models.includes('qwen2.5:1.5b')),
      'the pulled tag seen on the engine',
      10_000,
    );
    expect(lastRegister(stack) ?? []).not.toContain(QWEN);
  });

  it('refusals reach the console with bridge codes: not an engine here, not a model name, not on disk, not listed', async () => {
    stack = await withOllama();
    await expect(stack.agent.invoke('demand.pull', { engineUrl: 'http://169.254.169.254', model: TAG })).rejects.toMatchObject({ code: 'invalid_args' });
    await expect(stack.agent.invoke('demand.pull', { engineUrl: ollama.url, model: 'x; rm -rf /' })).rejects.toMatchObject({ code: 'invalid_args' });
    await expect(stack.agent.invoke('demand.pull', { engineUrl: ollama.url, model: TAG, networkId: 'not/listed' })).rejects.toMatchObject({
      code: 'not_found',
    });
    await expect(stack.agent.invoke('demand.serve', { modelId: 'openai/gpt-5.4' })).rejects.toMatchObject({ code: 'not_found' });
    expect(ollama.pulled).toEqual([]);
  });

  it('a network model Ollama already has under its tag: "serve this" maps it, the tag is no longer announced on its own', async () => {
    ollama.pulled.push(TAG);
    stack = await withOllama();
    // Switched on under its tag first, as the owner may have done: the hub cannot route that name.
    await stack.agent.invoke('models.setEnabled', { model: TAG, enabled: true });
    await until(() => lastRegister(stack!)?.includes(TAG) === true, 'the tag announced');
    const d = (await stack.agent.invoke('demand.list', {})) as DemandView;
    expect(d.rows[0]).toMatchObject({
      modelId: QWEN,
      here: 'on_disk',
      local: { engineUrl: ollama.url, model: TAG },
      sizeGb: 0.37,
      parameterSize: '494.03M',
      quantization: 'Q4_K_M',
    });

    await stack.agent.invoke('demand.serve', { modelId: QWEN });
    await until(() => lastRegister(stack!)?.includes(QWEN) === true, 'register lists the network id', 10_000);
    expect(lastRegister(stack)).toEqual([QWEN]);
    expect(modelOf(stack.agent, TAG)).toBeUndefined();
    expect(await askHub(stack)).toBe('Ping-ok.');
    expect(ollamaChats()).toEqual([TAG]);
  });
});
