// A SIMULATED OpenAI-compatible engine for `swan-provider demo` on machines with no real engine.
// It is labelled everywhere: models are owned_by "swan-simulated", ids start with "simulated-", and
// every answer begins with "[simulated] ". It streams plausible text at a realistic token rate
// (SSE with stream_options.include_usage, like vLLM) or answers in one JSON body.
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { requestTarget } from '../core/http/request-target';
import { readBody } from '../core/http/read-body';
import { formatIssues } from '../shared/zod-issues';

export interface SimulatedEngineOptions {
  host?: string;
  /** 0 (default) picks a free port. */
  port?: number;
  models?: string[];
  /** Generation speed (default 45 tokens/s, with ±20 % jitter per token). */
  tokensPerSecond?: number;
  /** Delay before the first token (default 180 ms). */
  firstTokenMs?: number;
  /** Tokens generated when the request sets no max_tokens (default 120). */
  defaultMaxTokens?: number;
}

export interface SimulatedEngine {
  /** Base URL without /v1, e.g. http://127.0.0.1:41234 */
  url: string;
  port: number;
  models: string[];
  close(): Promise<void>;
}

export const SIMULATED_PREFIX = '[simulated] ';
export const DEFAULT_SIMULATED_MODELS = ['simulated-llama-3.1-8b-instruct', 'simulated-qwen2.5-7b-instruct'];
const MAX_TOKENS_CAP = 4096;

const message = z.object({ role: z.string().max(32), content: z.union([z.string(), z.array(z.unknown()), z.null()]).optional() }).passthrough();
const common = {
  model: z.string().min(1).max(256),
  stream: z.boolean().optional(),
  stream_options: z.object({ include_usage: z.boolean().optional() }).passthrough().nullish(),
  max_tokens: z.number().int().positive().nullish(),
  max_completion_tokens: z.number().int().positive().nullish(),
};
const chatBody = z.object({ ...common, messages: z.array(message).min(1) }).passthrough();
const completionBody = z.object({ ...common, prompt: z.union([z.string(), z.array(z.string())]) }).passthrough();

const SENTENCES = [
  'A GPU runs thousands of small cores in parallel, which suits the matrix products at the heart of a transformer.',
  'Each generated token needs one forward pass through every layer, so memory bandwidth often limits speed more than raw compute.',
  'Batching several requests together keeps the cores busy and raises throughput, at the cost of a little latency per request.',
  'The key-value cache stores attention state for tokens already seen, so the model does not recompute them at every step.',
  'Quantising weights to eight or four bits shrinks the model so it fits in less VRAM, usually with a small loss in quality.',
  'Longer prompts take more time before the first token, because the whole prompt is processed in the prefill phase.',
  'A provider earns for the tokens it serves, so a healthy engine and a steady connection matter more than peak speed.',
  'Temperature controls how adventurous sampling is: low values give focused answers, high values give varied ones.',
  'When the GPU is busy with a game or a render, pausing serving keeps both the owner and the network happy.',
  'Streaming sends each token as soon as it exists, so the reader sees the answer grow instead of waiting for all of it.',
];

/** Plausible text as tokens (words with their trailing space), starting with the simulated label. */
export function simulatedTokens(seed: string, count: number): string[] {
  const tokens: string[] = [SIMULATED_PREFIX];
  let i = crypto.createHash('sha256').update(seed).digest()[0]! % SENTENCES.length;
  while (tokens.length < count) {
    for (const w of SENTENCES[i % SENTENCES.length]!.split(' ')) {
      if (tokens.length >= count) break;
      tokens.push(`${w} `);
    }
    i++;
  }
  return tokens;
}

function promptTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

function promptText(raw: unknown, kind: 'chat' | 'completion'): string {
  if (kind === 'chat') {
    const body = chatBody.parse(raw);
    return body.messages.map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content ?? ''))).join('\n');
  }
  const body = completionBody.parse(raw);
  return Array.isArray(body.prompt) ? body.prompt.join('\n') : body.prompt;
}

function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function openAiError(res: http.ServerResponse, status: number, msg: string, type = 'invalid_request_error'): void {
  sendJson(res, status, { error: { message: msg, type, code: status } });
}

export async function startSimulatedEngine(opts: SimulatedEngineOptions = {}): Promise<SimulatedEngine> {
  const host = opts.host ?? '127.0.0.1';
  const models = opts.models?.length ? opts.models : DEFAULT_SIMULATED_MODELS;
  const rate = Math.max(1, opts.tokensPerSecond ?? 45);
  const firstTokenMs = Math.max(0, opts.firstTokenMs ?? 180);
  const defaultMax = opts.defaultMaxTokens ?? 120;
  const created = Math.floor(Date.now() / 1000);
  const timers = new Set<NodeJS.Timeout>();

  const wait = (ms: number, signal: AbortSignal): Promise<boolean> =>
    new Promise((resolve) => {
      if (signal.aborted) return resolve(false);
      const t = setTimeout(() => {
        timers.delete(t);
        signal.removeEventListener('abort', onAbort);
        resolve(true);
      }, ms);
      const onAbort = () => {
        clearTimeout(t);
        timers.delete(t);
        resolve(false);
      };
      timers.add(t);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  const tokenDelay = () => (1000 / rate) * (0.8 + Math.random() * 0.4);

  async function generate(req: http.IncomingMessage, res: http.ServerResponse, kind: 'chat' | 'completion'): Promise<void> {
    let raw: unknown;
    try {
      raw = JSON.parse(await readBody(req));
    } catch (e) {
      return openAiError(res, 400, `The body is not valid JSON: ${(e as Error).message}`);
    }
    const parsed = (kind === 'chat' ? chatBody : completionBody).safeParse(raw);
    if (!parsed.success) return openAiError(res, 400, formatIssues(parsed.error, { root: 'body' }));
    const body = parsed.data;
    if (!models.includes(body.model))
      return openAiError(res, 404, `The model \`${body.model}\` does not exist. This simulated engine serves: ${models.join(', ')}.`, 'NotFoundError');

    const prompt = promptText(body, kind);
    const count = Math.min(MAX_TOKENS_CAP, body.max_completion_tokens ?? body.max_tokens ?? defaultMax);
    const tokens = simulatedTokens(`${prompt}${Math.random()}`, Math.max(1, count));
    // With an explicit limit the answer is cut there ('length'); otherwise it ends on its own ('stop').
    const finish = body.max_completion_tokens || body.max_tokens ? 'length' : 'stop';
    const usage = { prompt_tokens: promptTokens(prompt), completion_tokens: tokens.length, total_tokens: promptTokens(prompt) + tokens.length };
    const id = `${kind === 'chat' ? 'chatcmpl' : 'cmpl'}-sim-${crypto.randomBytes(8).toString('hex')}`;
    const now = Math.floor(Date.now() / 1000);
    const aborter = new AbortController();
    res.on('close', () => aborter.abort());

    if (!body.stream) {
      let ok = await wait(firstTokenMs, aborter.signal);
      for (let i = 1; ok && i < tokens.length; i++) ok = await wait(tokenDelay(), aborter.signal);
      if (!ok) return;
      const text = tokens.join('').trimEnd();
      const choice =
        kind === 'chat'
          ? { index: 0, message: { role: 'assistant', content: text }, logprobs: null, finish_reason: finish }
          : { index: 0, text, logprobs: null, finish_reason: finish };
      return sendJson(res, 200, {
        id,
        object: kind === 'chat' ? 'chat.completion' : 'text_completion',
        created: now,
        model: body.model,
        choices: [choice],
        usage,
      });
    }

    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    const object = kind === 'chat' ? 'chat.completion.chunk' : 'text_completion';
    const event = (choices: unknown[], extra: Record<string, unknown> = {}) =>
      res.write(`data: ${JSON.stringify({ id, object, created: now, model: body.model, choices, ...extra })}\n\n`);
    const piece = (text: string, finishReason: string | null) =>
      kind === 'chat'
        ? {
            index: 0,
            delta: text === '' && finishReason === null ? { role: 'assistant', content: '' } : finishReason ? {} : { content: text },
            logprobs: null,
            finish_reason: finishReason,
          }
        : { index: 0, text, logprobs: null, finish_reason: finishReason };
    if (kind === 'chat') event([piece('', null)]);
    if (!(await wait(firstTokenMs, aborter.signal))) return;
    for (let i = 0; i < tokens.length; i++) {
      if (i > 0 && !(await wait(tokenDelay(), aborter.signal))) return;
      event([piece(tokens[i]!, null)]);
    }
    event([piece('', finish)]);
    if (body.stream_options?.include_usage) event([], { usage });
    res.end('data: [DONE]\n\n');
  }

  const server = http.createServer((req, res) => {
    const path = requestTarget(req.url)?.pathname ?? '(bad target)';
    const route = `${req.method} ${path}`;
    const run = async (): Promise<void> => {
      switch (route) {
        case 'GET /v1/models':
          return sendJson(res, 200, {
            object: 'list',
            data: models.map((id) => ({ id, object: 'model', created, owned_by: 'swan-simulated', max_model_len: 8192 })),
          });
        case 'GET /health':
          return sendJson(res, 200, { status: 'ok', simulated: true });
        case 'GET /version':
          return sendJson(res, 200, { version: 'swan-simulated-1' });
        case 'POST /v1/chat/completions':
          return generate(req, res, 'chat');
        case 'POST /v1/completions':
          return generate(req, res, 'completion');
        default:
          return openAiError(res, 404, `No route ${route} on the simulated engine.`, 'NotFoundError');
      }
    };
    run().catch((e: Error) => {
      if (!res.headersSent) openAiError(res, 400, e.message);
      else res.destroy();
    });
  });
  server.on('clientError', (_e, socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    models,
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        timers.clear();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
