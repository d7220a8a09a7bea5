// The minimal forwarder: the practical limit the agent is compared with. A ws client that connects to the
// hub's /ws like a provider, registers, and for each inference POSTs to the engine, parses its SSE with
// eventsource-parser and forwards each data JSON as stream_chunk {request_id, chunk, done, seq}, then
// stream_end. No features: no scheduler, no health, no heartbeat, no resume, no ledger, no backpressure.
// Run as its own process, from its bundle (bench/agent-bundle.ts: `node <bundle> <hub ws url> <key> <engine url>`;
// `node --import tsx bench/minimal-forwarder.ts …` also works);
// prints "forwarder registered" once the hub acknowledged it.
import crypto from 'node:crypto';
import http from 'node:http';
import { createParser } from 'eventsource-parser';
import WebSocket from 'ws';

const [hubWs, key, engineUrl] = process.argv.slice(2);
if (!hubWs || !key || !engineUrl) {
  process.stderr.write('usage: minimal-forwarder.ts <hub ws url> <provider key> <engine url>\n');
  process.exit(2);
}

const agent = new http.Agent({ keepAlive: true });
const nodeId = crypto.randomBytes(32).toString('hex');
const ws = new WebSocket(`${hubWs}/ws`);

const send = (type: string, payload: Record<string, unknown>): void => {
  ws.send(JSON.stringify({ type, payload }));
};

function forward(requestId: string, request: Record<string, unknown>): void {
  const started = Date.now();
  let seq = 0;
  let tokensIn = 0;
  let tokensOut = 0;
  const end = (error?: string): void => {
    send('stream_end', {
      request_id: requestId,
      latency_ms: Date.now() - started,
      tokens_input: tokensIn,
      tokens_output: tokensOut,
      seq: ++seq,
      ...(error ? { status_code: 502, error } : {}),
    });
  };
  const parser = createParser({
    onEvent: (ev) => {
      if (ev.data === '[DONE]') {
        send('stream_chunk', { request_id: requestId, chunk: null, done: true, seq: ++seq });
        return;
      }
      const chunk = JSON.parse(ev.data) as { usage?: { prompt_tokens?: number; completion_tokens?: number } };
      if (chunk.usage) {
        tokensIn = chunk.usage.prompt_tokens ?? tokensIn;
        tokensOut = chunk.usage.completion_tokens ?? tokensOut;
      }
      send('stream_chunk', { request_id: requestId, chunk, done: false, seq: ++seq });
    },
  });
  const body = JSON.stringify({ ...request, stream: true });
  const req = http.request(`${engineUrl}/v1/chat/completions`, {
    method: 'POST',
    agent,
    headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
  });
  req.on('response', (res) => {
    res.setEncoding('utf8');
    res.on('data', (text: string) => parser.feed(text));
    res.on('end', () => end());
    res.on('error', (e) => end(e.message));
  });
  req.on('error', (e) => end(e.message));
  req.end(body);
}

ws.on('open', () => {
  ws.send(
    JSON.stringify({
      type: 'register',
      request_id: 'register-1',
      payload: {
        node_id: nodeId,
        provider_id: nodeId,
        node_name: 'bench-forwarder',
        token: key,
        models: ['bench'],
        capabilities: ['stream'],
        protocol_version: '1',
        hardware: {},
      },
    }),
  );
});
ws.on('message', (data) => {
  const msg = JSON.parse(data.toString()) as { type: string; request_id?: string; payload?: Record<string, unknown> };
  if (msg.type === 'ack' && msg.request_id === 'register-1') {
    send('model_health_update', { node_id: nodeId, model_health: { bench: 'healthy' } });
    process.stdout.write('forwarder registered\n');
  } else if (msg.type === 'inference' && msg.request_id) {
    forward(msg.request_id, (msg.payload?.request ?? {}) as Record<string, unknown>);
  }
});
ws.on('error', (e) => process.stderr.write(`forwarder: ${e.message}\n`));
ws.on('close', () => process.exit(0));
process.once('SIGINT', () => ws.close());
process.once('SIGTERM', () => ws.close());
