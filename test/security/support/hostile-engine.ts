// A hostile engine stand-in: an OpenAI-compatible HTTP server (GET /v1/models, POST /v1/chat/completions,
// streaming as SSE `data:` lines, as vLLM documents it) whose answers are chosen by the requested model:
// one ordinary model and models that answer with nesting, size and key-count attacks. It records what it
// was sent (to check that no secret reaches it).
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** The ordinary model: a short, well-formed answer. */
export const SAFE_MODEL = 'safe-model';

/** Models whose answers attack the agent, by name. */
export const HOSTILE_MODELS = {
  /** A non-streaming answer nested ~6,000 deep (it once stopped the agent while encoded for the hub). */
  deepAnswer: 'deep-answer',
  /** A stream whose second event is nested 6,000 deep. */
  deepStream: 'deep-stream',
  /** A non-streaming answer with 3 million keys (over 32 MB: the size limit or the key limit). */
  wideAnswer: 'wide-answer',
  /** A stream event of 3 MB in one data line. */
  hugeEvent: 'huge-event',
  /** A non-streaming answer that is not JSON, then one with a deep error body. */
  garbage: 'garbage',
} as const;

export const ALL_MODELS = [SAFE_MODEL, ...Object.values(HOSTILE_MODELS)];

const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;

function completion(model: string, content: string, extra = ''): string {
  return `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":${JSON.stringify(model)},"choices":[{"index":0,"message":{"role":"assistant","content":${JSON.stringify(content)}},"finish_reason":"stop"${extra}}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`;
}

function chunk(model: string, content: string | null, finish: string | null = null, extra = ''): string {
  return `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":${JSON.stringify(model)},"choices":[{"index":0,"delta":${content === null ? '{}' : `{"content":${JSON.stringify(content)}}`},"finish_reason":${finish === null ? 'null' : JSON.stringify(finish)}${extra}}]}`;
}

export class HostileEngine {
  /** Raw request bodies and headers, as received. */
  readonly seen: string[] = [];
  port = 0;
  private readonly sockets = new Set<Socket>();
  private readonly server: http.Server;

  private constructor() {
    this.server = http.createServer((req, res) => void this.handle(req, res));
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
  }

  static async start(): Promise<HostileEngine> {
    const e = new HostileEngine();
    await new Promise<void>((resolve) => e.server.listen(0, '127.0.0.1', resolve));
    e.port = (e.server.address() as AddressInfo).port;
    return e;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const parts: Buffer[] = [];
    for await (const c of req) parts.push(c as Buffer);
    const body = Buffer.concat(parts).toString('utf8');
    this.seen.push(`${req.method} ${req.url} ${JSON.stringify(req.headers)} ${body}`);
    if (req.method === 'GET' && req.url === '/v1/models') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data: ALL_MODELS.map((id) => ({ id, object: 'model', owned_by: 'hostile' })) }));
      return;
    }
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"error":{"message":"not found"}}');
      return;
    }
    let b: { model?: string; stream?: boolean } = {};
    try {
      b = JSON.parse(body) as typeof b;
    } catch {
      /* answered as the safe model */
    }
    const model = b.model ?? SAFE_MODEL;
    if (b.stream) return this.stream(res, model);
    res.writeHead(200, { 'content-type': 'application/json' });
    switch (model) {
      case HOSTILE_MODELS.deepAnswer:
        return void res.end(completion(model, 'hi', `,"logprobs":${deep(6000)}`));
      case HOSTILE_MODELS.wideAnswer: {
        // Written in pieces: 3,000,000 keys, ~33 MB.
        res.write('{"choices":[{"index":0,"message":{"role":"assistant","content":"x"},"finish_reason":"stop"}],"w":{');
        const piece = Array.from({ length: 10_000 }, (_, i) => `"k${i}":1`).join(',');
        for (let i = 0; i < 300; i++) {
          if (!res.write(`${i ? ',' : ''}${piece.replace(/"k/g, `"k${i}_`)}`)) await new Promise((r) => res.once('drain', r));
          if (res.destroyed) return;
        }
        return void res.end('}}');
      }
      case HOSTILE_MODELS.garbage:
        return void res.end(`not json ${'{'.repeat(10_000)}`);
      default:
        return void res.end(completion(model, 'hi'));
    }
  }

  private stream(res: http.ServerResponse, model: string): void {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const send = (data: string) => res.write(`data: ${data}\n\n`);
    send(chunk(model, 'hi'));
    if (model === HOSTILE_MODELS.deepStream) send(chunk(model, ' there', null, `,"logprobs":${deep(6000)}`));
    else if (model === HOSTILE_MODELS.hugeEvent) send(chunk(model, 'x'.repeat(3 * 1024 * 1024)));
    else if (model === HOSTILE_MODELS.garbage) send(`{${'"a":{'.repeat(6000)}`);
    else send(chunk(model, ' there'));
    send(chunk(model, null, 'stop'));
    send(
      '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"x","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}',
    );
    res.end('data: [DONE]\n\n');
  }
}
