// Where engines serve a model from, read as each engine documents it (test engines answering /props,
// /v1/models, /api/show, /info with real shapes), and which files of a folder may enter a manifest: links
// are followed only inside the model's own folder (or its Hugging Face repo's blobs), so a hub can never
// learn the hash of an unrelated file of the owner's.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { engineReader } from '../../../src/core/weights/engine-reader';
import { locateModel, resolveModelRoot, walk } from '../../../src/core/weights/locate';
import { startTestEngine, type TestEngine, type TestEngineOptions } from '../../support/engine-server';
import { safetensors } from '../../support/weight-files';

let root: string;
let hf: string;
const engines: TestEngine[] = [];
const read = engineReader(2000);

beforeAll(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-locate-'));
  fs.writeFileSync(path.join(root, 'secret.txt'), 'the owner private file');
  fs.mkdirSync(path.join(root, 'elsewhere'));
  fs.writeFileSync(path.join(root, 'elsewhere', 'id_rsa'), 'PRIVATE KEY');
  const plain = path.join(root, 'plain');
  fs.mkdirSync(plain);
  fs.writeFileSync(path.join(plain, 'config.json'), JSON.stringify({ torch_dtype: 'bfloat16' }));
  fs.writeFileSync(path.join(plain, 'model.safetensors'), safetensors('weights'));
  fs.writeFileSync(path.join(plain, 'fake.safetensors'), 'not a safetensors file');
  fs.writeFileSync(path.join(plain, 'tokenizer.txt'), 'vocab');
  fs.writeFileSync(path.join(plain, 'modeling.py'), 'import os');
  fs.writeFileSync(path.join(plain, '.gitattributes'), '*.bin lfs');
  fs.writeFileSync(path.join(plain, 'run.sh'), '#!/bin/sh');
  fs.mkdirSync(path.join(root, 'not-a-model'));
  fs.writeFileSync(path.join(root, 'not-a-model', 'taxes.txt'), 'private');
  fs.symlinkSync(path.join(root, 'secret.txt'), path.join(plain, 'weights.bin'));
  fs.symlinkSync(path.join(root, 'elsewhere'), path.join(plain, 'sub'));
  fs.symlinkSync('model.safetensors', path.join(plain, 'alias.safetensors'));
  // Like ~/.docker: a config.json and nothing of a model's.
  fs.mkdirSync(path.join(root, 'user', '.docker'), { recursive: true });
  fs.writeFileSync(path.join(root, 'user', '.docker', 'config.json'), JSON.stringify({ auths: { 'registry.example': { auth: 'c2VjcmV0' } } }));
  fs.mkdirSync(path.join(root, 'user', '.ssh', 'keys'), { recursive: true });
  fs.writeFileSync(path.join(root, 'user', '.ssh', 'keys', 'id.safetensors'), safetensors('still a config folder'));
  fs.mkdirSync(path.join(root, 'config-only'));
  fs.writeFileSync(path.join(root, 'config-only', 'config.json'), JSON.stringify({ torch_dtype: 'float16' }));
  // A Hugging Face cache: hub/models--org--model/{blobs, refs/main, snapshots/<rev>/file -> ../../blobs/…}
  hf = path.join(root, 'hf-home', 'hub');
  const repo = path.join(hf, 'models--org--model');
  fs.mkdirSync(path.join(repo, 'blobs'), { recursive: true });
  fs.mkdirSync(path.join(repo, 'refs'), { recursive: true });
  fs.mkdirSync(path.join(repo, 'snapshots', 'abc123'), { recursive: true });
  fs.writeFileSync(path.join(repo, 'refs', 'main'), 'abc123');
  fs.writeFileSync(path.join(repo, 'blobs', 'b1'), safetensors('weights'));
  fs.writeFileSync(path.join(repo, 'blobs', 'b2'), JSON.stringify({ quantization_config: { quant_method: 'awq', bits: 4 } }));
  fs.symlinkSync('../../blobs/b1', path.join(repo, 'snapshots', 'abc123', 'model.safetensors'));
  fs.symlinkSync('../../blobs/b2', path.join(repo, 'snapshots', 'abc123', 'config.json'));
  fs.symlinkSync(path.join(root, 'secret.txt'), path.join(repo, 'snapshots', 'abc123', 'leak.txt'));
  // GGUF shards and an Ollama blob folder.
  fs.mkdirSync(path.join(root, 'gguf'));
  for (const n of ['big-00001-of-00002.gguf', 'big-00002-of-00002.gguf', 'other.gguf']) fs.writeFileSync(path.join(root, 'gguf', n), `GGUF${n}`);
  fs.writeFileSync(path.join(root, 'gguf', 'notes.gguf'), 'not a model');
  fs.mkdirSync(path.join(root, 'ollama', 'models', 'blobs'), { recursive: true });
  fs.writeFileSync(path.join(root, 'ollama', 'models', 'blobs', `sha256-${'a'.repeat(64)}`), 'GGUF');
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
afterEach(async () => {
  for (const e of engines.splice(0)) await e.close();
});

async function engine(o: TestEngineOptions): Promise<TestEngine> {
  const e = await startTestEngine(o);
  engines.push(e);
  return e;
}

describe.skipIf(process.platform === 'win32')('the files of a model folder', () => {
  it("keeps only weight files with their format's first bytes: no config, tokenizer, .txt or .py; no links out of the folder, dot files or a fake", () => {
    expect(walk(path.join(root, 'plain')).map((f) => f.filename)).toEqual(['alias.safetensors', 'model.safetensors']);
  });

  it('a folder with a config.json and no weights, a dot-folder or a config folder is never read (~/.docker, ~/.ssh)', async () => {
    for (const dir of [path.join(root, 'user', '.docker'), path.join(root, 'user', '.ssh', 'keys'), path.join(root, 'config-only')]) {
      const e = await engine({ engineType: 'vllm', routes: { 'GET /v1/models': { object: 'list', data: [{ id: 'm', root: dir }] } } });
      const f = await locateModel({ url: e.url, type: 'vllm' }, 'm', read, { env: {} });
      expect(f.location.ok, dir).toBe(false);
    }
  });

  it("a folder that does not look like a model's (no config.json, no weights; a home; the root) is never read", async () => {
    const e = await engine({ engineType: 'vllm', routes: { 'GET /v1/models': { object: 'list', data: [{ id: 'm', root: path.join(root, 'not-a-model') }] } } });
    expect((await locateModel({ url: e.url, type: 'vllm' }, 'm', read, { env: {} })).location).toEqual({
      ok: false,
      reason: `vLLM /v1/models root is ${path.join(root, 'not-a-model')}, which does not look like a model's folder (no weight files at its top, or a dot-folder or config folder)`,
    });
    const home = await engine({ engineType: 'vllm', routes: { 'GET /v1/models': { object: 'list', data: [{ id: 'm', root: path.join(root, 'plain') }] } } });
    expect((await locateModel({ url: home.url, type: 'vllm' }, 'm', read, { env: { HOME: path.join(root, 'plain') } })).location.ok).toBe(false);
  });

  it('reads a Hugging Face snapshot through its links into the repo blobs, never a link leaving the repo', () => {
    const snap = path.join(hf, 'models--org--model', 'snapshots', 'abc123');
    expect(walk(snap).map((f) => f.filename)).toEqual(['model.safetensors']);
  });

  it("finds a Hugging Face id, or another machine's cache path, in this machine's cache", () => {
    const env = { HF_HOME: path.join(root, 'hf-home') };
    const snap = path.join(hf, 'models--org--model', 'snapshots', 'abc123');
    expect(resolveModelRoot('org/model', env)).toBe(snap);
    expect(resolveModelRoot('/workspace/hf-cache/models--org--model/snapshots/abc123', env)).toBe(snap);
    // Another revision than the one here: refs/main's.
    expect(resolveModelRoot('/root/.cache/huggingface/hub/models--org--model/snapshots/fff999', env)).toBe(snap);
    expect(resolveModelRoot('org/absent', env)).toBeUndefined();
    expect(resolveModelRoot(path.join(root, 'plain'), {})).toBe(path.join(root, 'plain'));
  });
});

describe('what engines say of a model', () => {
  it('llama.cpp: /props model_path with its sibling shards, model_ftype, modalities', async () => {
    const e = await engine({
      engineType: 'llamacpp',
      routes: {
        'GET /props': {
          model_path: path.join(root, 'gguf', 'big-00002-of-00002.gguf'),
          model_ftype: 'Q4_K - Medium',
          modalities: { vision: true, audio: false },
          total_slots: 2,
        },
      },
    });
    const f = await locateModel({ url: e.url, type: 'llamacpp' }, 'big', read, { env: {} });
    expect(f.quantization).toBe('Q4_K - Medium');
    expect(f.modalities).toEqual({ vision: true });
    expect(f.location).toEqual({
      ok: true,
      located: {
        root: path.join(root, 'gguf'),
        via: 'llama.cpp /props model_path',
        files: [
          { filename: 'big-00001-of-00002.gguf', path: path.join(root, 'gguf', 'big-00001-of-00002.gguf') },
          { filename: 'big-00002-of-00002.gguf', path: path.join(root, 'gguf', 'big-00002-of-00002.gguf') },
        ],
      },
    });
  });

  it('llama.cpp naming a file that is not a GGUF: never hashed', async () => {
    const e = await engine({ engineType: 'llamacpp', routes: { 'GET /props': { model_path: path.join(root, 'gguf', 'notes.gguf') } } });
    expect((await locateModel({ url: e.url, type: 'llamacpp' }, 'x', read, { env: {} })).location).toEqual({
      ok: false,
      reason: `llama.cpp names ${path.join(root, 'gguf', 'notes.gguf')}, which is not a GGUF file`,
    });
  });

  it('llama.cpp in a container: a model_path not on this machine is unlocated, with the path in the reason', async () => {
    const e = await engine({ engineType: 'llamacpp', routes: { 'GET /props': { model_path: '/models/tiny.gguf', model_ftype: 'all F32' } } });
    const f = await locateModel({ url: e.url, type: 'llamacpp' }, 'tiny', read, { env: {} });
    expect(f.location).toEqual({ ok: false, reason: 'llama.cpp serves /models/tiny.gguf, which is not a file on this machine' });
    expect(f.quantization).toBe('all F32');
  });

  it('vLLM: /v1/models root (a container cache path) found in the local Hugging Face cache; quantization from its config.json', async () => {
    const e = await engine({
      engineType: 'vllm',
      routes: {
        'GET /v1/models': {
          object: 'list',
          data: [{ id: 'org/model', object: 'model', root: '/workspace/hf-cache/models--org--model/snapshots/abc123', max_model_len: 4096 }],
        },
      },
    });
    const f = await locateModel({ url: e.url, type: 'vllm' }, 'org/model', read, { env: { HF_HOME: path.join(root, 'hf-home') } });
    expect(f.quantization).toBe('awq');
    expect(f.location.ok && f.location.located.files.map((x) => x.filename)).toEqual(['model.safetensors']);
    expect(f.location.ok && f.location.located.via).toBe('vLLM /v1/models root');
  });

  it("SGLang: a Hugging Face id as root; a local folder's torch_dtype when it is not quantized", async () => {
    const e = await engine({ engineType: 'sglang', routes: { 'GET /v1/models': { object: 'list', data: [{ id: 'm', root: path.join(root, 'plain') }] } } });
    const f = await locateModel({ url: e.url, type: 'sglang' }, 'm', read, { env: {} });
    expect(f.quantization).toBe('bfloat16');
    expect(f.location.ok && f.location.located.root).toBe(path.join(root, 'plain'));
  });

  it("Ollama: /api/show modelfile FROM blob (found in OLLAMA_MODELS when the path is a container's), quantization_level and capabilities", async () => {
    const blob = `sha256-${'a'.repeat(64)}`;
    const e = await engine({
      engineType: 'ollama',
      routes: {
        'POST /api/show': (body: unknown) => ({
          modelfile: `# Modelfile generated by "ollama show"\nFROM /root/.ollama/models/blobs/${blob}\nTEMPLATE """{{ .Prompt }}"""\nPARAMETER num_ctx 4096\n`,
          details: { format: 'gguf', family: 'nomic-bert', quantization_level: 'F16' },
          capabilities: ['embedding'],
          model: (body as { model: string }).model,
        }),
      },
    });
    const f = await locateModel({ url: e.url, type: 'ollama' }, 'nomic-embed-text', read, { env: { OLLAMA_MODELS: path.join(root, 'ollama', 'models') } });
    expect(f.quantization).toBe('F16');
    expect(f.modalities).toEqual({ embedding: true });
    expect(f.location).toEqual({
      ok: true,
      located: {
        root: path.join(root, 'ollama', 'models', 'blobs'),
        files: [{ filename: blob, path: path.join(root, 'ollama', 'models', 'blobs', blob) }],
        via: 'Ollama /api/show',
      },
    });
    expect(e.requests.find((r) => r.path === '/api/show')?.body).toEqual({ model: 'nomic-embed-text' });
  });

  it('LM Studio and engines that do not answer are unlocated, with the reason', async () => {
    expect((await locateModel({ url: 'http://127.0.0.1:9', type: 'lmstudio' }, 'm', read, { env: {} })).location).toEqual({
      ok: false,
      reason: 'LM Studio does not say where its model files are',
    });
    expect((await locateModel({ url: 'http://127.0.0.1:9', type: 'llamacpp' }, 'm', read, { env: {} })).location).toEqual({
      ok: false,
      reason: 'llama.cpp did not answer /props',
    });
  });
});
