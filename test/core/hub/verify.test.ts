import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { requestJson } from '../../../src/core/engine/client';
import type { EngineEndpoint } from '../../../src/core/engine/types';
import { handleVerify, insideDir, type DeterministicResponse, type FingerprintResponse, type VerifyDeps } from '../../../src/core/hub/verify';
import { startTestEngine, type TestEngine } from '../../support/engine-server';

const sha = (s: string | Buffer) => createHash('sha256').update(s).digest('hex');

let root: string;
let modelDir: string;
const weights = Buffer.alloc(3 * 1024 * 1024 + 17, 7); // spans several read chunks
const config = '{"architectures":["LlamaForCausalLM"]}';

beforeAll(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-verify-'));
  modelDir = path.join(root, 'models', 'llama');
  fs.mkdirSync(path.join(modelDir, 'sub'), { recursive: true });
  fs.writeFileSync(path.join(modelDir, 'model.safetensors'), weights);
  fs.writeFileSync(path.join(modelDir, 'sub', 'config.json'), config);
  fs.writeFileSync(path.join(root, 'secret.txt'), 'outside the model folder');
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

let engine: TestEngine | undefined;
afterEach(async () => {
  await engine?.close();
  engine = undefined;
});

function deps(endpoint: EngineEndpoint, dir: string = modelDir, extra: Partial<VerifyDeps> = {}): VerifyDeps {
  return {
    resolve: (model) => (model === 'llama' ? { endpoint, ...(dir ? { modelDir: dir } : {}) } : undefined),
    complete: requestJson,
    ...extra,
  };
}
const noEngine: EngineEndpoint = { url: 'http://127.0.0.1:9' };

describe('verify: fingerprint', () => {
  it('reports pass, fail and missing per file', async () => {
    const cache = new Map<string, string>();
    const reply = await handleVerify(
      {
        challenge_id: 'ch-1',
        challenge_type: 'fingerprint',
        model_id: 'llama',
        challenge: {
          files: [
            { filename: 'model.safetensors', expected_hash: `sha256:${sha(weights).toUpperCase()}` },
            { filename: 'sub/config.json', expected_hash: sha('something else') },
            { filename: 'tokenizer.json', expected_hash: sha('x') },
          ],
        },
      },
      deps(noEngine, modelDir, { hashCache: cache }),
    );
    expect(reply.challenge_id).toBe('ch-1');
    expect(reply.success).toBe(false);
    expect(reply.error).toBeUndefined();
    expect((reply.response as FingerprintResponse).files).toEqual([
      { filename: 'model.safetensors', hash: sha(weights), status: 'pass' },
      { filename: 'sub/config.json', hash: sha(config), status: 'fail' },
      { filename: 'tokenizer.json', hash: '', status: 'missing' },
    ]);
    expect(cache.size).toBe(2);
  });

  it('succeeds when every file matches', async () => {
    const reply = await handleVerify(
      {
        challenge_id: 'ch-2',
        challenge_type: 'fingerprint',
        model_id: 'llama',
        challenge: { files: [{ filename: 'model.safetensors', expected_hash: sha(weights) }, { filename: 'sub/config.json', expected_hash: sha(config) }] },
      },
      deps(noEngine),
    );
    expect(reply).toMatchObject({ challenge_id: 'ch-2', success: true });
    expect((reply.response as FingerprintResponse).files.map((f) => f.status)).toEqual(['pass', 'pass']);
  });

  it('refuses file names that leave the model folder and never reads them', async () => {
    const reply = await handleVerify(
      {
        challenge_id: 'ch-3',
        challenge_type: 'fingerprint',
        model_id: 'llama',
        challenge: {
          files: [
            { filename: '../../secret.txt', expected_hash: sha('outside the model folder') },
            { filename: 'sub/../../../secret.txt', expected_hash: '' },
            { filename: path.join(root, 'secret.txt'), expected_hash: '' },
            { filename: '..\\..\\secret.txt', expected_hash: '' },
            { filename: 'model.safetensors', expected_hash: sha(weights) },
          ],
        },
      },
      deps(noEngine),
    );
    expect(reply).toMatchObject({ success: false, error_code: 'path_outside_model' });
    expect(reply.error).toContain('refused 4 file name(s)');
    const files = (reply.response as FingerprintResponse).files;
    expect(files.slice(0, 4).every((f) => f.status === 'missing' && f.hash === '')).toBe(true);
    expect(files[4]).toMatchObject({ status: 'pass' });

    expect(insideDir('/m', 'a/b')).toBe(path.resolve('/m/a/b'));
    expect(insideDir('/m', '.')).toBeUndefined();
    expect(insideDir('/m', 'a\0b')).toBeUndefined();
    expect(insideDir('/m', 'C:\\x')).toBeUndefined();
  });

  it('says so when the engine does not expose the model folder', async () => {
    const reply = await handleVerify(
      { challenge_id: 'ch-4', challenge_type: 'fingerprint', model_id: 'llama', challenge: { files: [{ filename: 'a', expected_hash: 'b' }] } },
      deps(noEngine, ''),
    );
    expect(reply).toMatchObject({ challenge_id: 'ch-4', success: false, error_code: 'no_model_dir', response: { files: [{ filename: 'a', hash: '', status: 'missing' }] } });
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
    expect(reply).toEqual({ challenge_id: 'd-1', success: true, response: { tokens: ['tok0', 'tok1', 'tok2', 'tok3', 'tok4'], text: 'tok0 tok1 tok2 tok3 tok4' } });
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
      deps({ url: engine.url }, modelDir, { timeoutMs: 100 }),
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

    const shape = await handleVerify({ challenge_id: 'x-4', challenge_type: 'deterministic', model_id: 'llama', challenge: { prompt: 'a', seed: 'one', max_tokens: 3 } }, d);
    expect(shape).toMatchObject({ error_code: 'invalid_challenge', error: expect.stringContaining('seed') });
  });
});
