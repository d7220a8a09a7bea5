// A stand-in of Ollama's model API as its docs describe it: POST /api/pull {model, stream} answers
// application/x-ndjson, one JSON object per line — "pulling manifest", per layer "pulling <digest>"
// with digest/total/completed, "verifying sha256 digest", "writing manifest", "success" — or
// {"error": "..."} for a model the registry does not have. GET /api/tags lists pulled models as the docs'
// "List Local Models" shows them (size in bytes, details.parameter_size / quantization_level). Enough of
// the rest to be found and served as an engine: "Ollama is running" on /, /api/version, the OpenAI
// compatible /v1/models and /v1/chat/completions (streaming the real captured Ollama trace for a pulled
// model; Ollama's 404 "not found, try pulling it first" for any other). POST /api/generate with no prompt
// loads a model (`keep_alive` as given) or, with `keep_alive: 0`, unloads it (`done_reason: "unload"`), and
// GET /api/ps lists what is loaded, as the docs' "Load a model" / "Unload a model" / "List Running Models" say.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readTrace } from './traces';

/** What `ollama list` shows for a model (the real qwen2.5:0.5b: 398 MB, 494.03M parameters, Q4_K_M). */
export interface StandInModel {
  size: number;
  parameter_size: string;
  quantization_level: string;
}

export class OllamaStandIn {
  readonly pulled: string[] = [];
  /** Models loaded in memory (GET /api/ps). */
  readonly loaded = new Set<string>();
  readonly requests: Array<{ path: string; body: unknown }> = [];
  /** Models the "registry" has: name -> layer sizes in bytes. */
  registry: Record<string, number[]> = { 'qwen2.5:0.5b': [397_807_936, 6_924, 11_343] };
  /** How each model shows in /api/tags once pulled. */
  details: Record<string, StandInModel> = { 'qwen2.5:0.5b': { size: 397_821_319, parameter_size: '494.03M', quantization_level: 'Q4_K_M' } };
  private constructor(private readonly server: http.Server) {}

  static start(): Promise<OllamaStandIn> {
    const server = http.createServer();
    const s = new OllamaStandIn(server);
    server.on('request', (req, res) => s.handle(req, res));
    return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(s)));
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      let json: { model?: string; name?: string; stream?: boolean; keep_alive?: unknown; prompt?: string } = {};
      try {
        json = body ? (JSON.parse(body) as typeof json) : {};
      } catch {
        // answered below
      }
      this.requests.push({ path: req.url ?? '', body: json });
      if (req.method === 'GET' && req.url === '/api/tags') {
        const models = this.pulled.map((name) => {
          const d = this.details[name];
          return {
            name,
            model: name,
            modified_at: '2026-11-30T09:12:44.512391233Z',
            ...(d ? { size: d.size } : {}),
            digest: 'a8b0c51577010a279d933d14c2a8ab4b268079d44c5c8830c0a93900f1827c67',
            details: {
              parent_model: '',
              format: 'gguf',
              family: 'qwen2',
              families: ['qwen2'],
              ...(d ? { parameter_size: d.parameter_size, quantization_level: d.quantization_level } : {}),
            },
          };
        });
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ models }));
      }
      if (req.method === 'GET' && req.url === '/') return void res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end('Ollama is running');
      if (req.method === 'GET' && req.url === '/api/version')
        return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"version":"0.12.6"}');
      if (req.method === 'GET' && req.url === '/v1/models') {
        const data = this.pulled.map((id) => ({ id, object: 'model', created: 1764494000, owned_by: 'library' }));
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data }));
      }
      if (req.method === 'POST' && req.url === '/v1/chat/completions') {
        const model = typeof json.model === 'string' ? json.model : '';
        if (!this.pulled.includes(model)) {
          const error = { error: { message: `model "${model}" not found, try pulling it first`, type: 'api_error', param: null, code: null } };
          return void res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify(error));
        }
        return void res.writeHead(200, { 'content-type': 'text/event-stream' }).end(readTrace('ollama-chat-classic-include-usage.sse'));
      }
      if (req.method === 'GET' && req.url === '/api/ps') {
        const models = [...this.loaded].map((name) => ({
          name,
          model: name,
          size: this.details[name]?.size ?? 0,
          size_vram: this.details[name]?.size ?? 0,
          expires_at: '2026-12-06T10:00:00Z',
        }));
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ models }));
      }
      if (req.method === 'POST' && req.url === '/api/generate' && !json.prompt) {
        const model = typeof json.model === 'string' ? json.model : '';
        if (!this.pulled.includes(model))
          return void res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: `model '${model}' not found` }));
        const unload = json.keep_alive === 0 || json.keep_alive === '0';
        if (unload) this.loaded.delete(model);
        else this.loaded.add(model);
        return void res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ model, created_at: '2026-12-06T09:00:00Z', response: '', done: true, ...(unload ? { done_reason: 'unload' } : {}) }));
      }
      if (req.method !== 'POST' || req.url !== '/api/pull') return void res.writeHead(404).end('404 page not found');
      const name = json.model ?? json.name ?? '';
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      const line = (o: unknown): boolean => res.write(`${JSON.stringify(o)}\n`);
      line({ status: 'pulling manifest' });
      const layers = this.registry[name];
      if (!layers) return void res.end(`${JSON.stringify({ error: 'pull model manifest: file does not exist' })}\n`);
      layers.forEach((size, i) => {
        const digest = `sha256:${String(i).repeat(64).slice(0, 64)}`;
        line({ status: `pulling ${digest.slice(7, 19)}`, digest, total: size });
        line({ status: `pulling ${digest.slice(7, 19)}`, digest, total: size, completed: Math.floor(size / 2) });
        line({ status: `pulling ${digest.slice(7, 19)}`, digest, total: size, completed: size });
      });
      line({ status: 'verifying sha256 digest' });
      line({ status: 'writing manifest' });
      this.pulled.push(name);
      res.end(`${JSON.stringify({ status: 'success' })}\n`);
    });
  }
}
