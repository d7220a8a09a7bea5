// Fault: messages at the 1 MB limit, both ways. Inbound: a frame of exactly 1 MB is accepted, one byte
// more closes the socket (the link's maxPayload); the link reconnects and an in-flight stream resumes
// intact. Outbound: an engine chunk or answer that would make a message over 1 MB is refused with an
// error log, and the hub gets a clear error for that request.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startDevHub, type DevHub } from '../../src/cli/dev-hub';
import { Agent } from '../../src/core/agent';
import { memoryLog } from '../../src/core/base/log';
import { MAX_MESSAGE_BYTES } from '../../src/core/protocol/messages';
import { logEntries, TEST_KEY, registered, startStack, tempHome, until, type Stack } from '../support/stack';
import { generatedText } from '../support/traces';
import { audit, nextDisconnect, report, streamChat } from '../support/faults/faults';
import { writeConfigToml } from '../support/config-toml';

const cleanups: Array<() => Promise<void>> = [];
let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** An inference frame for a model nobody serves, padded to exactly `bytes` bytes (ASCII). */
function paddedFrame(id: string, bytes: number): string {
  const frame = (pad: string): string =>
    JSON.stringify({
      type: 'inference',
      request_id: id,
      payload: { model_id: 'fuzz/not-served', stream: true, request: { messages: [{ role: 'user', content: pad }] } },
    });
  const base = Buffer.byteLength(frame(''));
  const text = frame('p'.repeat(bytes - base));
  expect(Buffer.byteLength(text)).toBe(bytes);
  return text;
}

/**
 * A tiny raw engine whose answers carry one huge chunk: the stream sends 3 tokens, one chunk with
 * `hugeChars` of content, then (like an engine still generating) 3 more tokens `tailDelayMs` apart and
 * [DONE]; the non-stream answer's content is that big.
 */
async function hugeChunkEngine(hugeChars: number, tailDelayMs = 50): Promise<{ url: string; aborted: () => number; close: () => Promise<void> }> {
  let aborted = 0;
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ object: 'list', data: [{ id: 'big-model', object: 'model' }] }));
        return;
      }
      const body = JSON.parse(Buffer.concat(parts).toString('utf8')) as { stream?: boolean };
      const chunk = (content: string | null, finish: string | null = null): string =>
        `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', model: 'big-model', choices: [{ index: 0, delta: content === null ? {} : { content }, finish_reason: finish }] })}\n\n`;
      res.on('close', () => {
        if (!res.writableEnded) aborted++;
      });
      if (!body.stream) {
        const answer = JSON.stringify({
          id: 'c',
          object: 'chat.completion',
          model: 'big-model',
          choices: [{ index: 0, message: { role: 'assistant', content: 'B'.repeat(hugeChars) }, finish_reason: 'stop' }],
        });
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) });
        res.end(answer);
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (let i = 0; i < 3; i++) res.write(chunk(i === 0 ? 'tok0' : ` tok${i}`));
      res.write(chunk('B'.repeat(hugeChars)));
      void (async () => {
        for (let i = 3; i < 6; i++) {
          if (tailDelayMs > 0) await new Promise((r) => setTimeout(r, tailDelayMs));
          if (res.destroyed) return;
          res.write(chunk(` tok${i}`));
        }
        res.write(chunk(null, 'stop'));
        res.end('data: [DONE]\n\n');
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    aborted: () => aborted,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The real Agent on a temp home whose models.json points at `endpoint`, registered with `hub`. */
async function agentFor(hub: DevHub, model: string, endpoint: string): Promise<Agent> {
  const home = tempHome();
  fs.writeFileSync(path.join(home, 'models.json'), JSON.stringify({ [model]: { endpoint } }));
  writeConfigToml(home, {
    Inference: { WebSocketURL: hub.wsUrl, ApiKey: TEST_KEY },
    Agent: {
      HeartbeatIntervalSeconds: 0.2,
      HealthCheckIntervalSeconds: 0.1,
      PingIntervalSeconds: 0.2,
      ReadTimeoutSeconds: 2,
      ReconnectMaxBackoffSeconds: 0.2,
      Discovery: false,
    },
  });
  const agent = await Agent.create({ home, log: memoryLog(), gpu: false, discovery: false, env: { PATH: process.env.PATH } });
  cleanups.push(async () => {
    await agent.stop();
    fs.rmSync(home, { recursive: true, force: true });
  });
  await agent.start();
  await until(() => agent.hubStatus().connected && hub.providers().some((p) => p.connected && p.models.includes(model)), 'agent registered with its model');
  return agent;
}

describe('1 MB message boundaries', () => {
  it('inbound: exactly 1 MB is accepted; 1 MB + 1 byte closes the socket, the link comes back and the stream in flight resumes intact', async () => {
    stack = await startStack({ engines: [{ mode: { generate: 100_000, delayMs: 2 } }] });
    await registered(stack);
    const { hub, agent } = { hub: stack.hub!, agent: stack.agent };
    const engine = stack.engines[0]!;
    const replies = new Map<string, Record<string, unknown>>();
    hub.events.on('message', (m: { type: string; payload: Record<string, unknown> }) => {
      if (m.type === 'stream_end' && typeof m.payload.request_id === 'string') replies.set(m.payload.request_id, m.payload);
    });
    const n = 600;
    const client = streamChat(hub, engine.modelIds[0]!, n);
    await engine.waitForEvents(50);

    hub.broadcastRaw(paddedFrame('at-limit', MAX_MESSAGE_BYTES));
    await until(() => replies.has('at-limit'), 'the 1 MB frame answered');
    expect(replies.get('at-limit')).toMatchObject({ status_code: 404 }); // parsed and served: the model is not here
    expect(agent.hubStatus().counters.dials).toBe(1);

    const down = nextDisconnect(agent);
    hub.broadcastRaw(paddedFrame('over-limit', MAX_MESSAGE_BYTES + 1));
    const { reason, code } = await down;
    expect(code).toBe('MESSAGE_TOO_LARGE');
    await until(() => agent.hubStatus().connected, 'reconnected');
    const o = await client;
    const a = audit(o.text, n);
    report(
      'inbound-1mb',
      {
        injected: 2,
        recovered: (replies.has('at-limit') ? 1 : 0) + (o.text === generatedText(n) ? 1 : 0),
        lost: a.lost + (o.error ? 1 : 0),
        duplicated: a.duplicated,
      },
      { reason },
    );
    expect(o.error).toBeUndefined();
    expect(o.text).toBe(generatedText(n));
    expect(replies.has('over-limit')).toBe(false); // never read, so never answered
    expect(agent.hubStatus().counters.dials).toBe(2);
  });

  it('outbound: a stream chunk over 1 MB is refused with an error log and the hub gets a clear error', async () => {
    const hub = await startDevHub({ token: TEST_KEY });
    cleanups.push(() => hub.close());
    const engine = await hugeChunkEngine(MAX_MESSAGE_BYTES + 1000);
    cleanups.push(() => engine.close());
    const agent = await agentFor(hub, 'big-model', engine.url);
    const o = await streamChat(hub, 'big-model', 10);
    await until(() => agent.hubStatus().relay.activeCount === 0, 'request finished');
    const toHub = hub.received.filter((m) => m.payload.request_id !== undefined && ['stream_chunk', 'stream_end', 'error'].includes(m.type));
    // The refused chunk ends the stream on its result path: stream_end with 413 (data already flowed).
    const oversize = toHub.find((m) => m.type === 'stream_end');
    const errorLogs = (await logEntries(agent, 500, 'error')).map((e) => e.msg);
    const end = toHub.find((m) => m.type === 'stream_end');
    report(
      'outbound-1mb-stream',
      { injected: 1, recovered: oversize && o.error ? 1 : 0, lost: oversize ? 0 : 1, duplicated: 0 },
      {
        clientError: o.error,
        afterErrorSent: toHub.slice(toHub.indexOf(oversize!) + 1).map((m) => m.type),
        endStatus: end?.payload.status_code,
        errorLogs: errorLogs.length,
      },
    );
    expect(oversize?.payload).toMatchObject({ status_code: 413, error: expect.stringMatching(/over the 1 MB message limit/) });
    expect(toHub.some((m) => m.type === 'error')).toBe(false);
    expect(o.code).toBe(413); // the hub passes on the agent's status: over the message size limit
    expect(o.text).toBe('tok0 tok1 tok2'); // what came before the refused chunk, nothing after it
    expect(errorLogs.some((m) => /1 MB/.test(m))).toBe(true);
    expect(toHub.slice(toHub.indexOf(oversize!) + 1)).toEqual([]); // the error ends the request
    await until(() => engine.aborted() === 1, 'the engine request cancelled');
    expect(agent.hubStatus().connected).toBe(true);
    expect(agent.hubStatus().counters.dials).toBe(1);
  });

  it('outbound: an oversize chunk among the last bytes of the engine answer still ends cleanly (no crash)', async () => {
    const hub = await startDevHub({ token: TEST_KEY });
    cleanups.push(() => hub.close());
    const engine = await hugeChunkEngine(MAX_MESSAGE_BYTES + 1000, 0);
    cleanups.push(() => engine.close());
    const agent = await agentFor(hub, 'big-model', engine.url);
    const o = await streamChat(hub, 'big-model', 10);
    expect(o.code).toBe(413); // the hub passes on the agent's status: over the message size limit
    await until(() => agent.hubStatus().relay.activeCount === 0, 'request finished');
    expect(agent.hubStatus().connected).toBe(true);
  });

  it('outbound: a non-stream answer over 1 MB is refused with an error log and the hub gets a clear error', async () => {
    const hub = await startDevHub({ token: TEST_KEY });
    cleanups.push(() => hub.close());
    const engine = await hugeChunkEngine(MAX_MESSAGE_BYTES + 1000);
    cleanups.push(() => engine.close());
    const agent = await agentFor(hub, 'big-model', engine.url);
    const res = await fetch(`${hub.url}/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ model: 'big-model', messages: [{ role: 'user', content: 'x' }] }),
    });
    const body = (await res.json()) as { error?: { message?: string; code?: number } };
    const errorLogs = (await logEntries(agent, 500, 'error')).map((e) => e.msg);
    report(
      'outbound-1mb-answer',
      { injected: 1, recovered: res.status === 413 ? 1 : 0, lost: res.status === 413 ? 0 : 1, duplicated: 0 },
      { status: res.status, errorLogs: errorLogs.length },
    );
    expect(res.status).toBe(413);
    expect(body.error?.code).toBe(413);
    expect(errorLogs.some((m) => /1 MB/.test(m))).toBe(true);
    expect(agent.hubStatus().connected).toBe(true);
  });
});
