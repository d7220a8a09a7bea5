// The dev hub's Swan model repository (`dev-hub --repository <dir>`): a local folder served in the shapes the
// client reads (catalogue, file list with true sha256s, bytes with Range), nothing outside the model folders
// served, and the whole "download a model from the network, verified" path walked by our own client against
// one dev hub; its simulated demand gives the model an earnings figure in `recommend`.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startDevHub, type DevHub } from '../../../src/cli/dev-hub';
import { byteRange } from '../../../src/cli/dev-hub-repository';
import { downloadModel } from '../../../src/core/downloads/model-download';
import { parseModelFiles } from '../../../src/core/downloads/repository';
import { GIB } from '../../../src/core/fit/estimate';
import { recommend } from '../../../src/core/fit/recommend';
import { MANIFEST_FILENAME, readGoManifest } from '../../../src/core/weights/manifest';
import { CliProcess, runCli } from '../../support/cli/cli';
import { tempHome, TEST_KEY, until } from '../../support/stack';
import { bytesOf, sha256 } from '../../support/swan-repository';
import { tinyLlamaGguf } from '../../support/gguf-file';

const ID = 'swan-test/tiny-chat';
const ENC = encodeURIComponent(ID);
const SHARD = bytesOf(300 * 1024 + 17, 11); // over 200 KB: several chunks, a real Range slice
/** The model's files as the repository must list them: sorted, dot-names left out. */
const FILES: Record<string, Buffer> = {
  'config.json': Buffer.from('{"architectures":["LlamaForCausalLM"]}\n'),
  'model.gguf': tinyLlamaGguf(),
  'shard-00001.bin': SHARD,
  'tokenizer/tokenizer.json': Buffer.from('{"version":"1.0"}\n'),
};
const TOTAL = Object.values(FILES).reduce((s, b) => s + b.length, 0);

let dir: string;
let hub: DevHub;
beforeAll(async () => {
  dir = tempHome('swan-dev-repo-');
  const model = path.join(dir, ...ID.split('/'));
  for (const [name, bytes] of Object.entries(FILES)) {
    fs.mkdirSync(path.dirname(path.join(model, name)), { recursive: true });
    fs.writeFileSync(path.join(model, name), bytes);
  }
  // Never listed nor served: dot-files, a dot-folder, a file where an org folder belongs, an empty model folder.
  fs.writeFileSync(path.join(model, '.hidden'), 'secret');
  fs.mkdirSync(path.join(model, '.cache'));
  fs.writeFileSync(path.join(model, '.cache', 'partial.bin'), 'x');
  fs.writeFileSync(path.join(dir, 'README.md'), 'not a model');
  fs.mkdirSync(path.join(dir, 'swan-test', 'empty'));
  hub = await startDevHub({ token: TEST_KEY, repository: dir });
});
afterAll(() => hub?.close());

/** A GET with the path sent exactly as written (fetch would normalise some of it). */
function get(p: string, headers: http.OutgoingHttpHeaders = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port: hub.port, path: p, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
  });
}
const json = (b: Buffer): unknown => JSON.parse(b.toString());

describe('the dev hub model repository', () => {
  it('lists the folder as the catalogue, in the shape the client reads', async () => {
    expect(hub.repository?.modelCount).toBe(1);
    const r = await get('/api/v1/models/catalog');
    expect(r.status).toBe(200);
    expect(json(r.body)).toEqual({
      code: 0,
      data: {
        models: [{ model_id: ID, name: 'tiny-chat', category: 'text-generation', file_count: Object.keys(FILES).length, total_size_bytes: TOTAL }],
        total: 1,
      },
    });
  });

  it("lists a model's files with their true sha256 and URLs on the dev hub; dot-files are not there", async () => {
    const r = await get(`/api/v1/models/${ENC}/files`);
    expect(r.status).toBe(200);
    const body = json(r.body) as {
      code: number;
      data: { model_id: string; files: Array<Record<string, unknown>>; total_size_bytes: number; file_count: number };
    };
    expect(body.code).toBe(0);
    expect(body.data).toMatchObject({ model_id: ID, total_size_bytes: TOTAL, file_count: Object.keys(FILES).length });
    expect(body.data.files).toEqual(
      Object.entries(FILES).map(([filename, bytes]) => ({
        filename,
        hash: sha256(bytes),
        algorithm: 'sha256',
        size_bytes: bytes.length,
        url: `${hub.url}/files/${ENC}/${filename.split('/').map(encodeURIComponent).join('/')}`,
      })),
    );
    // The client takes the list whole.
    expect(parseModelFiles(body, ID, hub.url).files.map((f) => f.filename)).toEqual(Object.keys(FILES));
  });

  it('serves the bytes: whole without Range, the slice asked for with one (206), 416 past the end', async () => {
    const url = `/files/${ENC}/shard-00001.bin`;
    const whole = await get(url);
    expect(whole.status).toBe(200);
    expect(whole.headers['accept-ranges']).toBe('bytes');
    expect(whole.headers['content-length']).toBe(String(SHARD.length));
    expect(whole.body.equals(SHARD)).toBe(true);

    const mid = await get(url, { range: 'bytes=70000-209999' });
    expect(mid.status).toBe(206);
    expect(mid.headers['content-range']).toBe(`bytes 70000-209999/${SHARD.length}`);
    expect(mid.headers['content-length']).toBe('140000');
    expect(mid.body.equals(SHARD.subarray(70000, 210000))).toBe(true);

    const tail = await get(url, { range: 'bytes=250000-' });
    expect(tail.status).toBe(206);
    expect(tail.headers['content-range']).toBe(`bytes 250000-${SHARD.length - 1}/${SHARD.length}`);
    expect(tail.body.equals(SHARD.subarray(250000))).toBe(true);

    const past = await get(url, { range: `bytes=${SHARD.length}-` });
    expect(past.status).toBe(416);
    expect(past.headers['content-range']).toBe(`bytes */${SHARD.length}`);

    const nested = await get(`/files/${ENC}/tokenizer/tokenizer.json`);
    expect(nested.body.equals(FILES['tokenizer/tokenizer.json']!)).toBe(true);
  });

  it('reads ranges as RFC 9110 says: closed ranges clamped, suffixes, an invalid one ignored', () => {
    expect(byteRange('bytes=0-99', 50)).toEqual([0, 49]);
    expect(byteRange('bytes=-10', 50)).toEqual([40, 49]);
    expect(byteRange('bytes=10-5', 50)).toBeUndefined();
    expect(byteRange('bytes=0-1,5-6', 50)).toBeUndefined();
    expect(byteRange('bytes=0-', 0)).toBe('unsatisfiable');
    expect(byteRange(undefined, 50)).toBeUndefined();
  });

  it('404s an unknown id, a dot-file and every path that would leave the model folder', async () => {
    const unknown = await get(`/api/v1/models/${encodeURIComponent('nobody/none')}/files`);
    expect(unknown.status).toBe(404);
    expect(json(unknown.body)).toMatchObject({ code: 404, message: expect.any(String) });
    for (const p of [
      '/files/swan-test%2F..%2F..%2Fetc/passwd',
      `/files/${ENC}/..%2F..%2F..%2F..%2Fetc%2Fpasswd`,
      `/files/${ENC}/..%2F..%2FREADME.md`, // a real file beside the model folders: a path joined blindly would reach it
      `/files/${ENC}/%2Fetc%2Fpasswd`,
      `/files/${ENC}/.hidden`,
      `/files/${ENC}/.cache/partial.bin`,
      `/files/${ENC}/%E0%A4%A`,
      `/files/${encodeURIComponent('nobody/none')}/config.json`,
    ]) {
      const r = await get(p);
      expect(r.status, p).toBe(404);
    }
  });

  it('our own client downloads the model from the dev hub, every file verified, with its manifest', async () => {
    const modelsDir = tempHome('swan-dev-repo-models-');
    const r = await downloadModel({ serviceUrl: hub.url, modelsDir, modelId: ID, freeBytes: async () => 1e15 });
    expect(r.state).toBe('verified');
    for (const [name, bytes] of Object.entries(FILES)) expect(fs.readFileSync(path.join(modelsDir, ID, name)).equals(bytes), name).toBe(true);
    const m = readGoManifest(modelsDir, ID);
    expect(m.ok).toBe(true);
    if (!m.ok) return;
    expect(m.manifest.files).toEqual(Object.entries(FILES).map(([filename, bytes]) => ({ filename, hash: sha256(bytes), size_bytes: bytes.length })));
    expect(fs.readdirSync(path.join(modelsDir, ID)).sort()).toEqual([MANIFEST_FILENAME, ...new Set(Object.keys(FILES).map((f) => f.split('/')[0]!))].sort());
  });

  it("gives the model simulated demand beside the fixture's, so recommend has an earnings figure for it", async () => {
    const demand = json((await get('/api/v1/stats/model-demand')).body) as { code: number; data: { models: Array<Record<string, unknown>> } };
    expect(demand.code).toBe(0);
    expect(demand.data.models.filter((m) => m.model_id === ID)).toHaveLength(1);
    expect(demand.data.models.map((m) => m.model_id)).toContain('meta-llama/Llama-3.1-8B-Instruct');

    const { rows } = await recommend({ serviceUrl: hub.url, modelsDir: tempHome('swan-dev-repo-rec-'), budgetBytes: 8 * GIB });
    const row = rows.find((x) => x.modelId === ID);
    expect(row).toMatchObject({ inRepository: true, sizeBytes: TOTAL, earnHereDaily: 0.6 });
    expect(row!.demand).toMatchObject({
      estEntrantDailyEarnings: 0.6,
      estDailyEarnings: 0.6,
      onlineProviders: 0,
      requests24h: 1200,
      demandTrend: 'rising',
      tier: 'small',
      vramKnown: false,
      contextLength: 8192,
    });
    // The fit comes from the GGUF's header, read by range requests from the dev hub's repository.
    expect(row!.fit.fit).toBe('fits');
  });

  it('lists the model in the public catalogue too, so a provider serving it is routed', async () => {
    const c = json((await get('/api/v1/models?page_size=200')).body) as { data: { list: Array<{ id: string; active: boolean }>; total: number } };
    expect(c.data.list.filter((m) => m.id === ID)).toEqual([expect.objectContaining({ id: ID, active: true })]);
    expect(c.data.total).toBe(c.data.list.length);
  });

  it('holds its downloads to --repository-rate: a 300 KB file at 600 KB/s takes half a second at least', async () => {
    const slow = await startDevHub({ repository: dir, repositoryRate: 600 * 1024 });
    try {
      const t0 = performance.now();
      const res = await fetch(`${slow.url}/files/${encodeURIComponent(ID)}/shard-00001.bin`);
      const body = Buffer.from(await res.arrayBuffer());
      // A lower bound only: the throttle can make it slower, never faster.
      expect(performance.now() - t0).toBeGreaterThanOrEqual(450);
      expect(sha256(body)).toBe(sha256(SHARD));
    } finally {
      await slow.close();
    }
  });

  it('routes a chat for the model id a provider announces (nothing repository-specific needed)', async () => {
    const ws = new WebSocket(`${hub.wsUrl}/ws`);
    try {
      const frames: Array<{ type: string; request_id?: string; payload: Record<string, unknown> }> = [];
      ws.on('message', (d) => frames.push(JSON.parse(d.toString()) as (typeof frames)[number]));
      await new Promise((r) => ws.once('open', r));
      ws.send(JSON.stringify({ type: 'register', payload: { node_id: 'node-repo', token: TEST_KEY, models: [ID], capabilities: ['inference'] } }));
      await until(() => frames.some((f) => f.type === 'ack'), 'register ack');
      const answer = fetch(`${hub.url}/v1/chat/completions`, {
        method: 'POST',
        body: JSON.stringify({ model: ID, messages: [{ role: 'user', content: 'hi' }] }),
      });
      await until(() => frames.some((f) => f.type === 'inference'), 'inference sent');
      const inf = frames.find((f) => f.type === 'inference')!;
      expect(inf.payload.model_id).toBe(ID);
      ws.send(
        JSON.stringify({
          type: 'ack',
          request_id: inf.request_id,
          payload: { request_id: inf.request_id, response: { id: 'r1', choices: [] }, status_code: 200 },
        }),
      );
      expect((await answer).status).toBe(200);
    } finally {
      ws.terminate();
    }
  });
});

describe('dev-hub --repository', () => {
  it('says how many models it serves from the folder, then stops cleanly', async () => {
    const p = CliProcess.start(['dev-hub', '--port', '0', '--repository', dir]);
    try {
      const m = await p.line(/ {2}model repository: (\d+) model\(s\) from (.+)\n/, 'the model repository line');
      expect(m[1]).toBe('1');
      expect(m[2]).toBe(path.resolve(dir));
    } finally {
      expect(await p.stop()).toBe(0);
    }
  });

  it('refuses to start on a folder that cannot be read: one line, exit 2', async () => {
    const missing = path.join(dir, 'no-such-folder');
    const r = await runCli(['dev-hub', '--port', '0', '--repository', missing]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([`The dev hub could not start: the model repository cannot be read: ${missing} (ENOENT)`]);
    expect(r.stdout).toBe('');
  });
});
