// What a client of the network is told when this provider cannot serve (issue 40): an engine that does not
// answer, before and after the health check has seen it, is a 503 with one generic message for the hub,
// never a 404 (the openai SDK raises NotFoundError and does not retry) and never the owner's engine address or
// advice meant for the owner. The owner's own words stay in the request log.
import { afterEach, describe, expect, it } from 'vitest';
import { NETWORK_OUTAGE, networkAnswer, scrubForNetwork } from '../../../src/core/hub/network-answer';
import { modelOf, registered, startStack, until, type Stack } from '../../support/stack';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

const ask = (model: string) => ({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 3 });

describe("the network's answer to a failed request", () => {
  it('an outage is 503 with the generic message; other failures keep their status without addresses or owner advice', () => {
    expect(
      networkAnswer({
        status: 'error',
        statusCode: 502,
        error: 'could not reach the engine at http://127.0.0.1:8080 (ECONNREFUSED); check that it is running',
        noAnswer: 'ECONNREFUSED',
      }),
    ).toEqual({ statusCode: 503, error: NETWORK_OUTAGE });
    expect(
      networkAnswer({ status: 'error', statusCode: 504, error: 'the engine at http://127.0.0.1:8080 sent no headers within 60 s', noAnswer: 'timeout' }),
    ).toEqual({ statusCode: 504, error: NETWORK_OUTAGE });
    expect(networkAnswer({ status: 'rejected', statusCode: 503, error: 'Model "m" is unavailable: every engine serving it is unhealthy.' })).toEqual({
      statusCode: 503,
      error: NETWORK_OUTAGE,
    });
    expect(networkAnswer({ status: 'error', statusCode: 400, error: 'max_tokens is too large' })).toEqual({
      statusCode: 400,
      error: 'max_tokens is too large',
    });
    expect(networkAnswer({ status: 'rejected', statusCode: 404, error: 'Model "x" is not served here.' }).statusCode).toBe(404);
    const scrubbed = scrubForNetwork('the engine at http://192.168.1.20:8080 answered 500; restart the engine');
    expect(scrubbed).not.toMatch(/192\.168|8080|restart/);
    expect(scrubForNetwork('the engine at 10.0.0.5:11434 answered 500')).not.toContain('10.0.0.5');
  });

  it('an engine that stops answering: the hub gets 503 and the generic message, before and after health sees it', async () => {
    stack = await startStack({ engines: [{ mode: { generate: 3 } }], agent: { HealthCheckIntervalSeconds: 30 } });
    await registered(stack);
    const engine = stack.engines[0]!;
    const model = engine.modelIds[0]!;
    const node = stack.hub!.providers()[0]!.nodeId;
    await engine.setMode('down');
    // Before any health check: the request itself finds the engine gone.
    const end = await stack.hub!.call(node, 'inference', { model_id: model, stream: true, request: ask(model) }, 'stream_end', 10_000);
    expect(end).toMatchObject({ status_code: 503, error: NETWORK_OUTAGE });
    const ack = await stack.hub!.call(node, 'inference', { model_id: model, stream: false, request: ask(model) }, 'ack', 10_000);
    expect(ack).toMatchObject({ status_code: 503, error: NETWORK_OUTAGE, response: null });
    await until(() => modelOf(stack!.agent, model)?.health === 'unhealthy', 'the model unhealthy', 15_000);
    // After: every engine of the model is down, a scheduler refusal — still an outage, not "no such model".
    const later = await stack.hub!.call(node, 'inference', { model_id: model, stream: true, request: ask(model) }, 'stream_end', 10_000);
    expect(later).toMatchObject({ status_code: 503, error: NETWORK_OUTAGE });
    const sent = JSON.stringify(stack.hub!.received.filter((m) => m.type === 'stream_end' || m.type === 'stream_chunk' || m.type === 'ack'));
    expect(sent).not.toContain(engine.url);
    expect(sent).not.toContain('127.0.0.1');
    expect(sent).not.toMatch(/check that it is running/);
  });
});
