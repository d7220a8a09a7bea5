// The hub's verify challenges. fingerprint: answered from the model's weight manifest (a real Weights
// service over real files, hashed on its worker thread), never by reading a path the hub names;
// deterministic: a temperature-0 seeded generation at a real test engine.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { requestJson } from '../../../src/core/engine-client/client';
import type { EngineEndpoint } from '../../../src/core/engine-client/types';
import { handleVerify, type DeterministicResponse, type FingerprintResponse, type VerifyDeps } from '../../../src/core/hub/verify';
import { memoryLog } from '../../../src/core/base/log';
import { walk } from '../../../src/core/weights/locate';
import { Weights } from '../../../src/core/weights/weights';
import { WorkerHasher, type FileHasher } from '../../../src/core/weights/hasher';
import { startTestEngine, type TestEngine } from '../../support/engine-server';
import { until } from '../../support/stack';
import { safetensors } from '../../support/weight-files';

const sha = (s: string | Buffer) => createHash('sha256').update(s).digest('hex');

let root: string;
let modelDir: string;
const weights = safetensors(Buffer.alloc(9 * 1024 * 1024 + 17, 7)); // spans several of the worker's 4 MiB reads
const config = '{"architectures":["LlamaForCausalLM"]}';
let book: Weights;

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-verify-'));
  modelDir = path.join(root, 'models', 'llama');
  fs.mkdirSync(path.join(modelDir, 'sub'), { recursive: true });
  fs.writeFileSync(path.join(modelDir, 'model.safetensors'), weights);
  fs.writeFileSync(path.join(modelDir, 'sub', 'config.json'), config);
  fs.writeFileSync(path.join(root, 'secret.txt'), 'outside the model folder');
  book = weightsOver(path.join(root, 'home-a'));
  book.sync([{ model: 'llama', location: { ok: true, located: { root: modelDir, files: walk(modelDir), via: 'test' } } }]);
  await until(() => book.status('llama')?.state === 'verified', 'llama hashed');
});
afterAll(async () => {
  await book.close();
  fs.rmSync(root, { recursive: true, force: true });
});

function weightsOver(home: string, hasher?: FileHasher, goModelsDir?: string): Weights {
  return new Weights({
    dir: path.join(home, 'weights'),
    log: memoryLog().child('weights'),
    ...(hasher ? { hasher } : {}),
    ...(goModelsDir ? { goModelsDir } : {}),
  });
}

let engine: TestEngine | undefined;
afterEach(async () => {
  await engine?.close();
  engine = undefined;
});

function deps(endpoint: EngineEndpoint, extra: Partial<VerifyDeps> = {}): VerifyDeps {
  return {
    resolve: (model) => (model === 'llama' ? { endpoint } : undefined),
    complete: requestJson,
    weights: book,
    ...extra,
  };
}
const noEngine: EngineEndpoint = { url: 'http://127.0.0.1:9' };
const challenge = (id: string, files: Array<{ filename: string; expected_hash: string }>) => ({
  challenge_id: id,
  challenge_type: 'fingerprint',
  model_id: 'llama',
  challenge: { files },
});

describe('verify: fingerprint', () => {
  it("reports pass with the matching hash, fail with the real one, and missing for a file that is not one of the model's weights", async () => {
    const reply = await handleVerify(
      challenge('ch-1', [
        { filename: 'model.safetensors', expected_hash: `sha256:${sha(weights).toUpperCase()}` },
        { filename: 'sub/config.json', expected_hash: sha('something else') },
        { filename: 'tokenizer.json', expected_hash: sha('x') },
        { filename: 'other.safetensors', expected_hash: sha('x') },
      ]),
      deps(noEngine),
    );
    expect(reply.challenge_id).toBe('ch-1');
    expect(reply.success).toBe(false);
    expect(reply.error).toBeUndefined();
    expect((reply.response as FingerprintResponse).files).toEqual([
      { filename: 'model.safetensors', hash: sha(weights), status: 'pass' },
      // Not a weight file: never hashed, so a hub learns nothing of it.
      { filename: 'sub/config.json', hash: '', status: 'missing' },
      { filename: 'tokenizer.json', hash: '', status: 'missing' },
      { filename: 'other.safetensors', hash: '', status: 'missing' },
    ]);
  });

  it('succeeds when every file matches', async () => {
    const reply = await handleVerify(challenge('ch-2', [{ filename: 'model.safetensors', expected_hash: sha(weights) }]), deps(noEngine));
    expect(reply).toMatchObject({ challenge_id: 'ch-2', success: true });
    expect((reply.response as FingerprintResponse).files.map((f) => f.status)).toEqual(['pass']);
  });

  it('never reads a path the hub names: names that leave the model folder are simply not among its files', async () => {
    const reply = await handleVerify(
      challenge('ch-3', [
        { filename: '../../secret.txt', expected_hash: sha('outside the model folder') },
        { filename: path.join(root, 'secret.txt'), expected_hash: '' },
        { filename: 'model.safetensors', expected_hash: sha(weights) },
      ]),
      deps(noEngine),
    );
    const files = (reply.response as FingerprintResponse).files;
    expect(files.slice(0, 2)).toEqual([
      { filename: '../../secret.txt', hash: '', status: 'missing' },
      { filename: path.join(root, 'secret.txt'), hash: '', status: 'missing' },
    ]);
    expect(files[2]).toMatchObject({ status: 'pass' });
    expect(JSON.stringify(reply)).not.toContain(sha('outside the model folder'));
  });

  it('says why when the node cannot tell where the files are (no_model_dir), and with no manifests at all', async () => {
    const other = weightsOver(path.join(root, 'home-b'));
    other.sync([{ model: 'llama', location: { ok: false, reason: 'LM Studio does not say where its model files are' } }]);
    const reply = await handleVerify(challenge('ch-4', [{ filename: 'a', expected_hash: 'b' }]), deps(noEngine, { weights: other }));
    expect(reply).toMatchObject({
      challenge_id: 'ch-4',
      success: false,
      error_code: 'no_model_dir',
      response: { files: [{ filename: 'a', hash: '', status: 'missing' }] },
    });
    expect(reply.error).toContain('LM Studio does not say where its model files are');
    await other.close();
    const none = await handleVerify(challenge('ch-5', [{ filename: 'a', expected_hash: 'b' }]), deps(noEngine, { weights: undefined }));
    expect(none).toMatchObject({ success: false, error_code: 'no_model_dir' });
  });

  it('waits for a file still being hashed, and past the wait says so (weights_pending) rather than "missing"', async () => {
    // A disk that gives nothing until released: the first hashing of a big model.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const real = new WorkerHasher();
    const slow: FileHasher = { hash: async (f, p) => (await gate, real.hash(f, p)), stop: () => real.stop() };
    const pending = weightsOver(path.join(root, 'home-c'), slow);
    pending.sync([{ model: 'llama', location: { ok: true, located: { root: modelDir, files: walk(modelDir), via: 'test' } } }]);
    const early = await handleVerify(
      challenge('ch-6', [{ filename: 'model.safetensors', expected_hash: sha(weights) }]),
      deps(noEngine, { weights: pending, weightsWaitMs: 50 }),
    );
    expect(early).toMatchObject({ success: false, response: null, error_code: 'weights_pending' });
    expect(early.error).toMatch(/still being hashed for the first time \(0\.0 of 0\.0 GB\)/);
    const later = handleVerify(
      challenge('ch-7', [{ filename: 'model.safetensors', expected_hash: sha(weights) }]),
      deps(noEngine, { weights: pending, weightsWaitMs: 30_000 }),
    );
    release();
    expect(await later).toMatchObject({ success: true, response: { files: [{ filename: 'model.safetensors', hash: sha(weights), status: 'pass' }] } });
    await pending.close();
  });

  it("answers from a Go node's manifest (~/.swan/models/<id>/.swan-hash-manifest.json) when there is one", async () => {
    const goModels = path.join(root, 'go-home', '.swan', 'models');
    fs.mkdirSync(path.join(goModels, 'llama'), { recursive: true });
    const h = 'ab'.repeat(32);
    fs.writeFileSync(
      path.join(goModels, 'llama', '.swan-hash-manifest.json'),
      JSON.stringify({
        model_id: 'llama',
        composite_hash: 'cd'.repeat(32),
        algorithm: 'sha256',
        files: [{ filename: 'model-00001-of-00002.safetensors', hash: h, size_bytes: 10 }],
        created_at: '2026-01-01T00:00:00Z',
      }),
    );
    const go = weightsOver(path.join(root, 'home-d'), undefined, goModels);
    go.sync([{ model: 'llama', location: { ok: false, reason: 'not needed' } }]);
    expect(go.compositeHash('llama')).toBe('cd'.repeat(32));
    const reply = await handleVerify(
      challenge('ch-8', [
        { filename: 'model-00001-of-00002.safetensors', expected_hash: h },
        { filename: 'model-00002-of-00002.safetensors', expected_hash: h },
      ]),
      deps(noEngine, { weights: go }),
    );
    expect((reply.response as FingerprintResponse).files.map((f) => f.status)).toEqual(['pass', 'missing']);
    await go.close();
  });
});

describe('verify: deterministic', () => {
  it('asks the engine for a temperature-0 seeded generation and returns tokens and text', async () => {
    engine = await startTestEngine({ mode: { generate: 20 } });
    const endpoint: EngineEndpoint = { url: engine.url, localModel: 'meta-llama/Llama-3.1-8B-Instruct' };
    const reply = await handleVerify(
      { challenge_id: 'd-1', challenge_type: 'deterministic', model_id: 'llama', challenge: { prompt: 'Count.', seed: 1234, max_tokens: 5 } },
      deps(endpoint),
    );
    expect(reply).toEqual({
      challenge_id: 'd-1',
      success: true,
      response: { tokens: ['tok0', 'tok1', 'tok2', 'tok3', 'tok4'], text: 'tok0 tok1 tok2 tok3 tok4' },
    });
    const sent = engine.requests.find((r) => r.path === '/v1/chat/completions')!;
    expect(sent.body).toMatchObject({
      model: 'meta-llama/Llama-3.1-8B-Instruct',
      messages: [{ role: 'user', content: 'Count.' }],
      temperature: 0,
      seed: 1234,
      max_tokens: 5,
      logprobs: true,
      stream: false,
    });
    // Same challenge twice: same answer.
    const again = await handleVerify(
      { challenge_id: 'd-2', challenge_type: 'deterministic', model_id: 'llama', challenge: { prompt: 'Count.', seed: 1234, max_tokens: 5 } },
      deps(endpoint),
    );
    expect((again.response as DeterministicResponse).text).toBe((reply.response as DeterministicResponse).text);
  });

  it('retries without logprobs when the engine refuses them, and reports the engine error', async () => {
    engine = await startTestEngine({ mode: { status: 400, body: { error: { message: 'logprobs is not supported', type: 'invalid_request_error' } } } });
    const reply = await handleVerify(
      { challenge_id: 'd-3', challenge_type: 'deterministic', model_id: 'llama', challenge: { prompt: 'Hi', seed: 1, max_tokens: 3 } },
      deps({ url: engine.url }),
    );
    expect(reply).toMatchObject({ challenge_id: 'd-3', success: false, response: null, error_code: 'generation_failed' });
    // The engine's own words reach the hub.
    expect(reply.error).toContain('logprobs is not supported');
    const bodies = engine.requests.filter((r) => r.path === '/v1/chat/completions').map((r) => r.body as Record<string, unknown>);
    expect(bodies).toHaveLength(2);
    expect(bodies[0]!.logprobs).toBe(true);
    expect(bodies[1]!.logprobs).toBeUndefined();
  });

  it('fails clearly when the engine does not answer in time or is not running', async () => {
    engine = await startTestEngine({ mode: 'hang' });
    const slow = await handleVerify(
      { challenge_id: 'd-4', challenge_type: 'deterministic', model_id: 'llama', challenge: { prompt: 'Hi', seed: 1, max_tokens: 3 } },
      deps({ url: engine.url }, { timeoutMs: 100 }),
    );
    expect(slow).toMatchObject({ success: false, error_code: 'generation_failed', error: 'generation failed: the engine did not answer within 0.1 s' });
    await engine.waitForAbort(1);

    const down = await handleVerify(
      { challenge_id: 'd-5', challenge_type: 'deterministic', model_id: 'llama', challenge: { prompt: 'Hi', seed: 1, max_tokens: 3 } },
      deps(noEngine),
    );
    expect(down).toMatchObject({ success: false, error_code: 'generation_failed' });
  });
});

describe('verify: bad input', () => {
  it('answers invalid payloads, unknown models and unknown challenge types with clear errors', async () => {
    const d = deps(noEngine);
    const bad = await handleVerify({ challenge_id: 'x-1', model_id: 'llama' }, d);
    expect(bad).toMatchObject({ challenge_id: 'x-1', success: false, response: null, error_code: 'invalid_payload' });
    // The field at fault is named.
    expect(bad.error).toContain('challenge_type');
    expect(await handleVerify('garbage', d)).toMatchObject({ challenge_id: '', success: false, error_code: 'invalid_payload' });

    const unknown = await handleVerify({ challenge_id: 'x-2', challenge_type: 'fingerprint', model_id: 'gpt-9', challenge: {} }, d);
    expect(unknown.error_code).toBe('model_not_served');

    const type = await handleVerify({ challenge_id: 'x-3', challenge_type: 'telepathy', model_id: 'llama', challenge: {} }, d);
    expect(type.error_code).toBe('unsupported_challenge');

    const shape = await handleVerify(
      { challenge_id: 'x-4', challenge_type: 'deterministic', model_id: 'llama', challenge: { prompt: 'a', seed: 'one', max_tokens: 3 } },
      d,
    );
    expect(shape).toMatchObject({ error_code: 'invalid_challenge', error: expect.stringContaining('seed') });
  });
});
