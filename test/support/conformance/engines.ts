// Stand-ins of engines in the states the v0.5 network tries a node against, each answering as the engine's
// own documentation and bug reports show it (node:http on 127.0.0.1, port 0), and recording what it was asked:
// - a dead vLLM behind a live API server: GET /v1/models keeps answering from its static list while every
//   completion is uvicorn's `500 Internal Server Error` (EngineDeadError, vLLM issues #5060, #9818, #42362) and
//   /health is 503 (vLLM PR #24897);
// - a model whose chat template leaks: the greeting comes back with `<|im_end|>` / `<|im_start|>user` in it and
//   runs to max_tokens (a ChatML model served without its template or stop tokens);
// - an engine behind a proxy that answers 502 once (a restarting upstream), then serves;
// - an embeddings (and images) engine: POST /v1/embeddings as OpenAI's API (usage prompt_tokens/total_tokens),
//   POST /v1/images/generations with the image API's usage names (input_tokens/output_tokens), and no chat.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readTrace } from '../traces';

export interface Asked {
  method: string;
  path: string;
  /** The JSON body; a body that is not JSON (a multipart upload) as {_raw: its text}. */
  body: Record<string, unknown>;
  contentType?: string;
  authorization?: string;
}

type Handler = (req: Asked, res: http.ServerResponse) => void;

export class StandInEngine {
  readonly asked: Asked[] = [];
  private constructor(
    private readonly server: http.Server,
    readonly name: string,
  ) {}

  static async start(name: string, routes: Record<string, Handler>): Promise<StandInEngine> {
    const holder: { engine?: StandInEngine } = {};
    const server = http.createServer((req, res) => {
      let text = '';
      req.on('data', (c: Buffer) => (text += c.toString('latin1')));
      req.on('end', () => {
        let body: Record<string, unknown> = {};
        try {
          body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
        } catch {
          body = { _raw: text };
        }
        const path = (req.url ?? '/').split('?')[0] ?? '/';
        const asked: Asked = {
          method: req.method ?? 'GET',
          path,
          body,
          ...(req.headers['content-type'] ? { contentType: req.headers['content-type'] } : {}),
          ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}),
        };
        holder.engine?.asked.push(asked);
        const route = routes[`${asked.method} ${path}`];
        if (route) return route(asked, res);
        json(res, 404, { detail: 'Not Found' });
      });
    });
    const engine = new StandInEngine(server, name);
    holder.engine = engine;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return engine;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The generations it was asked for (chat, completions, embeddings, images), in order. */
  generations(): Asked[] {
    return this.asked.filter((a) => a.method === 'POST');
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

export function json(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** vLLM's /v1/models for one model (its captured answer, the id replaced). */
function vllmModels(id: string): Handler {
  const captured = JSON.parse(readTrace('vllm-models.json').toString('utf8')) as { data: Array<Record<string, unknown>> };
  const body = { ...captured, data: captured.data.slice(0, 1).map((m) => ({ ...m, id, root: id })) };
  return (_q, res) => json(res, 200, body);
}

const created = () => Math.floor(Date.now() / 1000);

/** A chat answer (stream or not) with this content and finish reason, vLLM's shapes. */
function chatAnswer(content: string, finish: string, model: string, usage = { prompt_tokens: 9, completion_tokens: 7 }): Handler {
  return (q, res) => {
    const total = { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens };
    if (q.body.stream !== true) {
      return json(res, 200, {
        id: 'chatcmpl-s',
        object: 'chat.completion',
        created: created(),
        model,
        choices: [{ index: 0, message: { role: 'assistant', content }, logprobs: null, finish_reason: finish }],
        usage: total,
      });
    }
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
    const line = (o: unknown) => res.write(`data: ${JSON.stringify(o)}\n\n`);
    const head = { id: 'chatcmpl-s', object: 'chat.completion.chunk', created: created(), model };
    line({ ...head, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }] });
    line({ ...head, choices: [{ index: 0, delta: { content }, logprobs: null, finish_reason: null }] });
    line({ ...head, choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: finish }] });
    line({ ...head, choices: [], usage: total });
    res.end('data: [DONE]\n\n');
  };
}

/** vLLM with its engine core dead: the model list answers, every generation is a 500. */
export function deadVllm(model: string): Promise<StandInEngine> {
  const dead: Handler = (_q, res) => {
    // uvicorn's answer to the unhandled EngineDeadError.
    res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
    res.end('Internal Server Error');
  };
  return StandInEngine.start('dead vLLM', {
    'GET /v1/models': vllmModels(model),
    'GET /version': (_q, res) => json(res, 200, { version: '0.11.0' }),
    'GET /health': (_q, res) => res.writeHead(503).end(),
    'POST /v1/chat/completions': dead,
    'POST /v1/completions': dead,
  });
}

/** A ChatML model served without its stop tokens: the greeting leaks the template and runs to max_tokens. */
export function leakyVllm(model: string): Promise<StandInEngine> {
  return StandInEngine.start('template-leaking vLLM', {
    'GET /v1/models': vllmModels(model),
    'GET /version': (_q, res) => json(res, 200, { version: '0.11.0' }),
    'POST /v1/chat/completions': chatAnswer(
      'Hello! How can I help you today?<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello',
      'length',
      model,
    ),
  });
}

/** vLLM behind a proxy whose upstream restarts: the first generation is a 502, every one after it is served. */
export function flakyVllm(model: string): Promise<StandInEngine> {
  let failed = false;
  const answer = chatAnswer('ok', 'stop', model, { prompt_tokens: 3, completion_tokens: 1 });
  return StandInEngine.start('502-once vLLM', {
    'GET /v1/models': vllmModels(model),
    'GET /version': (_q, res) => json(res, 200, { version: '0.11.0' }),
    'POST /v1/chat/completions': (q, res) => {
      if (!failed && q.body.max_tokens !== 1) {
        failed = true;
        return json(res, 502, { error: { message: 'upstream 502', type: 'bad_gateway' } });
      }
      answer(q, res);
    },
  });
}

/** An embeddings and images server (no chat): OpenAI's shapes, the image API's usage names. */
export function embeddingsEngine(models: { embed: string; image: string }): Promise<StandInEngine> {
  return StandInEngine.start('embeddings engine', {
    'GET /v1/models': (_q, res) =>
      json(res, 200, {
        object: 'list',
        data: [models.embed, models.image].map((id) => ({ id, object: 'model', created: 1700000000, owned_by: 'vllm', max_model_len: 8192 })),
      }),
    'GET /version': (_q, res) => json(res, 200, { version: '0.11.0' }),
    'POST /v1/embeddings': (q, res) => {
      const inputs = Array.isArray(q.body.input) ? q.body.input : [q.body.input];
      const tokens = inputs.reduce((n: number, s) => n + String(s).split(/\s+/).filter(Boolean).length, 0);
      json(res, 200, {
        object: 'list',
        model: q.body.model,
        data: inputs.map((_s, index) => ({ object: 'embedding', index, embedding: [0.0123, -0.0456, 0.0789] })),
        usage: { prompt_tokens: tokens, total_tokens: tokens },
      });
    },
    'POST /v1/images/generations': (_q, res) =>
      json(res, 200, { created: created(), data: [{ b64_json: 'iVBORw0KGgo=' }], usage: { input_tokens: 12, output_tokens: 4160, total_tokens: 4172 } }),
    // OpenAI's transcription API: a multipart upload; usage in the input/output names.
    'POST /v1/audio/transcriptions': (_q, res) =>
      json(res, 200, { text: 'hello there', usage: { type: 'tokens', input_tokens: 20, output_tokens: 2, total_tokens: 22 } }),
    'POST /v1/chat/completions': (q, res) =>
      json(res, 400, {
        object: 'error',
        message: `The model \`${String(q.body.model)}\` does not support Chat Completions API`,
        type: 'BadRequestError',
        code: 400,
      }),
  });
}

/**
 * Ollama serving one model (its API docs' shapes): the OpenAI-compatible routes, /api/tags, /api/show (the
 * model's parameters without num_ctx and model_info with the trained maximum), /api/ps (nothing loaded), and
 * the load call: POST /api/generate with an empty prompt answers {done: true, done_reason: "load"}.
 */
export function ollamaEngine(model: string, trainedMax = 32768): Promise<StandInEngine> {
  return StandInEngine.start('Ollama', {
    'GET /': (_q, res) => res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end('Ollama is running'),
    'GET /api/version': (_q, res) => json(res, 200, { version: '0.12.6' }),
    'GET /api/tags': (_q, res) =>
      json(res, 200, {
        models: [
          { name: model, model, size: 397821319, details: { format: 'gguf', family: 'qwen2', parameter_size: '494.03M', quantization_level: 'Q4_K_M' } },
        ],
      }),
    'GET /v1/models': (_q, res) => json(res, 200, { object: 'list', data: [{ id: model, object: 'model', created: 1764494000, owned_by: 'library' }] }),
    'POST /api/show': (_q, res) =>
      json(res, 200, {
        parameters: 'stop                           "<|im_start|>"\nstop                           "<|im_end|>"',
        details: { format: 'gguf', family: 'qwen2' },
        model_info: { 'general.architecture': 'qwen2', 'qwen2.context_length': trainedMax },
      }),
    'GET /api/ps': (_q, res) => json(res, 200, { models: [] }),
    'POST /api/generate': (q, res) =>
      json(res, 200, { model: q.body.model, created_at: new Date().toISOString(), response: '', done: true, done_reason: 'load' }),
    'POST /v1/chat/completions': chatAnswer('Hello! How can I help you today?', 'stop', model, { prompt_tokens: 26, completion_tokens: 10 }),
  });
}
