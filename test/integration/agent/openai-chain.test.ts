// The whole chain with the official `openai` npm client: client -> dev hub -> agent -> test engine.
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { summarizeTrace } from '../../support/traces';
import { registered, startStack, type Stack } from '../../support/stack';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

const TRACES = [
  'vllm-chat-basic.sse',
  'sglang-chat-reasoning-include-usage.sse',
  'llamacpp-chat-include-usage.sse',
  'ollama-chat-v0.32-include-usage.sse',
  'tgi-chat-basic.sse',
  'lmstudio-chat-basic-v0.3.sse',
];

describe('openai client through hub and agent', () => {
  it.each(TRACES)('streams %s with the same text the engine sent', async (trace) => {
    stack = await startStack({ engines: [{ chatTrace: trace }] });
    await registered(stack);
    const model = stack.engines[0]!.modelIds[0]!;
    const client = new OpenAI({ baseURL: `${stack.hub!.url}/v1`, apiKey: 'client-key', maxRetries: 0 });
    const stream = await client.chat.completions.create({ model, stream: true, messages: [{ role: 'user', content: 'hello' }] });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe(summarizeTrace(trace).text);
  });

  it('gets a non-stream completion', async () => {
    stack = await startStack();
    await registered(stack);
    const model = stack.engines[0]!.modelIds[0]!;
    const client = new OpenAI({ baseURL: `${stack.hub!.url}/v1`, apiKey: 'client-key', maxRetries: 0 });
    const r = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hello' }] });
    expect(r.choices[0]!.message.content).toBe(summarizeTrace('vllm-chat-basic.sse').text);
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toContain(model);
  });
});
