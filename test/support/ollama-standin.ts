// A stand-in of Ollama's model API as its docs describe it: POST /api/pull {model, stream} answers
// application/x-ndjson, one JSON object per line — "pulling manifest", per layer "pulling <digest>"
// with digest/total/completed, "verifying sha256 digest", "writing manifest", "success" — or
// {"error": "..."} for a model the registry does not have. GET /api/tags lists pulled models.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export class OllamaStandIn {
  readonly pulled: string[] = [];
  readonly requests: Array<{ path: string; body: unknown }> = [];
  /** Models the "registry" has: name -> layer sizes in bytes. */
  registry: Record<string, number[]> = { 'qwen2.5:0.5b': [397_807_936, 6_924, 11_343] };
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
      let json: { model?: string; name?: string; stream?: boolean } = {};
      try {
        json = body ? (JSON.parse(body) as typeof json) : {};
      } catch {
        // answered below
      }
      this.requests.push({ path: req.url ?? '', body: json });
      if (req.method === 'GET' && req.url === '/api/tags') {
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ models: this.pulled.map((name) => ({ name, model: name, size: 397_826_203 })) }));
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
