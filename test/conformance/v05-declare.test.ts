// Conformance with what the v0.5 network measures of a node (../shared/HUB-PROTOCOL.md, "What the v0.5
// network asks beyond the wire"): model_declarations in register and every heartbeat, per engine kind;
// fingerprint challenges answered from the weights the node proves (pass / fail / missing); the register
// ack's registered_models and upgrade_available reaching the snapshot, the verdict, the console and doctor;
// a notice's model_id cleaned, not dropped; a failed ack or an error frame before registration logged with
// the link kept. The agent runs as users run it (`swan-provider run`, a child process) against the Go hub
// stand-in and engine stand-ins that answer their metadata as the engines document it.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentSnapshot, HubNoticeView } from '../../src/shared/views/snapshot';
import type { ModelDeclaration } from '../../src/core/protocol/messages';
import { HUB_DIALECT_VERSION } from '../../src/core/protocol/messages';
import { compositeHash } from '../../src/core/weights/manifest';
import { repoRoot } from '../support/traces';
import { startGoHub, type Frame, type GoHub } from '../support/conformance/go-hub';
import {
  ConsoleBridge,
  declareModels,
  eventually,
  KEY,
  LLAMA_NAME,
  layOutModelFiles,
  sha,
  spawnDeclareAgent,
  startDeclareEngines,
  VLLM_ID,
  type DeclareEngines,
  type ModelFiles,
  type RunningAgent,
} from '../support/conformance/declare-rig';

const VERSION = (JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version;
const UPGRADE = { running: HUB_DIALECT_VERSION, latest: '0.6.0', message: 'Provider 0.6.0 routes image requests.' };

let files: ModelFiles;
let engines: DeclareEngines;
let hub: GoHub;
let agent: RunningAgent;
let bridge: ConsoleBridge;
let seq = 0;

beforeAll(async () => {
  files = layOutModelFiles();
  engines = await startDeclareEngines(files);
  hub = await startGoHub({
    token: KEY,
    // The hub registers what it was told of, except a model it will not route (here: LM Studio's).
    registerAck: (f) => ({ registered_models: ((f.payload.models as string[]) ?? []).filter((m) => m !== 'lms-model'), upgrade_available: UPGRADE }),
  });
  agent = await spawnDeclareAgent({ hub, models: declareModels(engines), userHome: files.userHome });
  await hub.waitFor((f) => f.type === 'heartbeat', 'the first heartbeat', 40_000);
  bridge = await ConsoleBridge.open(agent);
}, 60_000);

afterAll(async () => {
  bridge?.close();
  await agent?.stop();
  await hub?.close();
  for (const e of engines?.all() ?? []) await e.close();
  if (files) fs.rmSync(files.userHome, { recursive: true, force: true });
});

const declarations = (f: Frame): Record<string, ModelDeclaration> =>
  Object.fromEntries(((f.payload.model_declarations as ModelDeclaration[]) ?? []).map((d) => [d.model_id, d]));
const HASHED = ['qwen-gguf', VLLM_ID, 'nomic-embed-text', 'org/go-model'];

/**
 * The register that declares all the node learns after its first one: every weight hash it can prove
 * (hashing ends after the first register) and the slots the engines publish (read by their health checks).
 */
function settledRegister(): Promise<Frame> {
  return hub
    .waitFor(
      (f) =>
        f.type === 'register' &&
        HASHED.every((m) => declarations(f)[m]?.weight_hash) &&
        ['qwen-gguf', 'nomic-embed-text'].every((m) => declarations(f)[m]?.capacity),
      'a register declaring every provable weight hash and every published slot count',
      20_000,
    )
    .catch((e: Error) => {
      // Say what the hub was last told, so a failure shows which fact never arrived.
      const last = [...hub.frames].reverse().find((f) => f.type === 'register');
      throw new Error(`${e.message}; the last register declared ${JSON.stringify(last && declarations(last))}`);
    });
}

describe('model_declarations (schema "1")', () => {
  it("one per announced model in register, with the hub's names, and what is not known left out", async () => {
    const reg = await settledRegister();
    const d = declarations(reg);
    expect(Object.keys(d).sort()).toEqual(['lms-model', 'nomic-embed-text', 'org/go-model', 'qwen-gguf', VLLM_ID].sort());
    for (const x of Object.values(d)) expect(x.schema_version).toBe('1');

    // llama.cpp: the engine's slots, its model_ftype, its vision modality, the window it states.
    expect(d['qwen-gguf']).toMatchObject({
      engine: 'llama.cpp',
      quantization: 'int4',
      weight_hash: compositeHash([{ filename: LLAMA_NAME, hash: sha(files.gguf.bytes) }]),
      hash_algo: 'sha256',
      capacity: [{ type: 'concurrency', unit: 'request', value: 2 }],
      output_modalities: [{ type: 'text', streaming: true }],
    });
    expect(d['qwen-gguf']!.input_modalities.map((m) => m.type)).toEqual(['text', 'image']);
    expect(d['qwen-gguf']!.input_modalities[0]!.max_context_length).toEqual({ value: 4096, unit: 'token' });
    // llama.cpp states its window in /props, not as max_model_len: not "detected" (mapping_mirror_test.go).
    expect(d['qwen-gguf']!.context_source).toBeUndefined();

    // vLLM: max_model_len is "detected"; bf16 from its config.json; its files found in this machine's
    // Hugging Face cache; no capacity (vLLM publishes no max_num_seqs).
    expect(d[VLLM_ID]).toMatchObject({
      engine: 'vllm',
      context_source: 'detected',
      quantization: 'bf16',
      // Weight files only: its config.json is read for the dtype, never hashed.
      weight_hash: compositeHash([{ filename: 'model.safetensors', hash: sha(files.hf.weights) }]),
      input_modalities: [{ type: 'text', max_context_length: { value: 4096, unit: 'token' } }],
    });
    expect(d[VLLM_ID]!.capacity).toBeUndefined();

    // Ollama: an embedding model by its own capabilities; Q8_0; its blob; its documented 1 request at a time.
    expect(d['nomic-embed-text']).toMatchObject({
      engine: 'ollama',
      quantization: 'int8',
      weight_hash: compositeHash([{ filename: files.ollama.blob, hash: sha(files.ollama.bytes) }]),
      output_modalities: [{ type: 'embeddings' }],
      capacity: [{ type: 'concurrency', unit: 'request', value: 1 }],
    });
    // Ollama's num_ctx is its serving window, declared without a source word; never its trained 2048.
    expect(d['nomic-embed-text']!.input_modalities[0]).toEqual({ type: 'text', max_context_length: { value: 8192, unit: 'token' } });
    expect(d['nomic-embed-text']!.context_source).toBeUndefined();

    // A Go node's download: its manifest's composite.
    expect(d['org/go-model']).toMatchObject({ engine: 'vllm', weight_hash: files.go.composite, hash_algo: 'sha256' });

    // LM Studio: no engine name the hub knows, nothing about its files, no stated slots: keys left out, not zeros.
    expect(Object.keys(d['lms-model']!).sort()).toEqual(['input_modalities', 'model_id', 'output_modalities', 'schema_version']);

    // model_hashes carries the same hashes, for hubs that read it.
    const hashes = Object.fromEntries((reg.payload.model_hashes as Array<{ model_id: string; weight_hash?: string }>).map((h) => [h.model_id, h.weight_hash]));
    expect(hashes['qwen-gguf']).toBe(d['qwen-gguf']!.weight_hash);
    expect(hashes['lms-model']).toBeUndefined();
  });

  it('every heartbeat carries the declarations of the last register, unchanged', async () => {
    const reg = await settledRegister();
    const from = hub.frames.indexOf(reg);
    const beats: Frame[] = [];
    for (let i = 0; i < 2; i++)
      beats.push(await hub.waitFor((f) => f.type === 'heartbeat' && !beats.includes(f), 'a heartbeat after the register', 10_000, from));
    const last = [...hub.frames].reverse().find((f) => f.type === 'register')!;
    for (const hb of beats) expect(hb.payload.model_declarations).toEqual(last.payload.model_declarations);
  });

  it('cp_version is the dialect spoken, the app version travels as client_version', async () => {
    const reg = await settledRegister();
    expect(reg.payload.cp_version).toBe(HUB_DIALECT_VERSION);
    expect(reg.payload).toMatchObject({ client: 'swan-provider-console', client_version: VERSION });
    expect(reg.payload).not.toHaveProperty('commit');
  });
});

async function fingerprint(model: string, files: Array<{ filename: string; expected_hash: string }>): Promise<Record<string, unknown>> {
  const id = `fp-${++seq}`;
  const from = hub.frames.length;
  hub.send({ type: 'verify', request_id: id, payload: { challenge_id: id, challenge_type: 'fingerprint', model_id: model, challenge: { files } } });
  const f = await hub.waitFor((x) => x.type === 'verify' && x.payload.challenge_id === id, `the verify reply ${id}`, 30_000, from);
  return f.payload;
}

describe('verify fingerprint, from the weights the node proves', () => {
  beforeAll(async () => {
    await settledRegister();
  });

  it("llama.cpp's GGUF under the catalogue's name: pass with its true sha256, fail with the real hash, missing for a file it lacks", async () => {
    const ok = await fingerprint('qwen-gguf', [{ filename: 'Qwen2.5-0.5B-Instruct-Q4_K_M.gguf', expected_hash: sha(files.gguf.bytes) }]);
    expect(ok).toMatchObject({
      success: true,
      response: { files: [{ filename: 'Qwen2.5-0.5B-Instruct-Q4_K_M.gguf', hash: sha(files.gguf.bytes), status: 'pass' }] },
    });
    const bad = await fingerprint('qwen-gguf', [
      { filename: LLAMA_NAME, expected_hash: sha('other weights') },
      { filename: 'tokenizer.json', expected_hash: sha('x') },
    ]);
    expect(bad).toMatchObject({
      success: false,
      response: {
        files: [
          { filename: LLAMA_NAME, hash: sha(files.gguf.bytes), status: 'fail' },
          { filename: 'tokenizer.json', hash: '', status: 'missing' },
        ],
      },
    });
    expect(bad.error_code).toBeUndefined();
  });

  it("vLLM's Hugging Face snapshot, Ollama's blob and a Go node's manifest answer too", async () => {
    expect(await fingerprint(VLLM_ID, [{ filename: 'model.safetensors', expected_hash: `sha256:${sha(files.hf.weights).toUpperCase()}` }])).toMatchObject({
      success: true,
    });
    expect(await fingerprint(VLLM_ID, [{ filename: 'config.json', expected_hash: sha(files.hf.config) }])).toMatchObject({
      success: false,
      response: { files: [{ filename: 'config.json', hash: '', status: 'missing' }] },
    });
    expect(await fingerprint('nomic-embed-text', [{ filename: 'nomic-embed-text-v1.5.Q8_0.gguf', expected_hash: sha(files.ollama.bytes) }])).toMatchObject({
      success: true,
    });
    expect(await fingerprint('org/go-model', [{ filename: 'model-00001-of-00001.safetensors', expected_hash: files.go.fileHash }])).toMatchObject({
      success: true,
      response: { files: [{ hash: files.go.fileHash, status: 'pass' }] },
    });
  });

  it('a model whose engine does not say where its files are fails with the reason, not a guess', async () => {
    const r = await fingerprint('lms-model', [{ filename: 'model.gguf', expected_hash: sha('x') }]);
    expect(r).toMatchObject({ success: false, error_code: 'no_model_dir', response: { files: [{ filename: 'model.gguf', hash: '', status: 'missing' }] } });
    expect(r.error).toContain('LM Studio does not say where its model files are');
  });
});

describe("the hub's view reaches the owner", () => {
  it('the snapshot has the unregistered model and the upgrade advice; the verdict and the log say it; the weights are verified', async () => {
    const snap = await eventually(
      async () => {
        const s = await bridge.invoke<AgentSnapshot>('snapshot.get');
        return s.hubView?.registeredModels && s.weights?.models.filter((w) => w.state === 'verified').length === 4 ? s : undefined;
      },
      'the hub view and verified weights in the snapshot',
      20_000,
    );
    expect(snap.hubView).toMatchObject({ notRegistered: ['lms-model'], upgrade: UPGRADE });
    expect(snap.verdict.reasons.find((r) => r.code === 'not_registered')?.models).toEqual(['lms-model']);
    const weights = Object.fromEntries(snap.weights!.models.map((w) => [w.model, w]));
    expect(weights['qwen-gguf']).toMatchObject({
      state: 'verified',
      source: 'computed',
      files: 1,
      totalBytes: files.gguf.bytes.length,
      doneBytes: files.gguf.bytes.length,
    });
    expect(weights['org/go-model']).toMatchObject({ state: 'verified', source: 'go-manifest', compositeHash: files.go.composite });
    expect(weights['lms-model']).toMatchObject({ state: 'unlocated', reason: 'LM Studio does not say where its model files are' });
    expect(agent.output()).toMatch(/the hub did not register the model lms-model: no requests will come for it/);
    expect(agent.output()).toMatch(/provider release 0\.6\.0 is current \(this node speaks 0\.5\.0\)/);
    expect(agent.output()).toMatch(/verifying weights of \S+: [\d.]+ of [\d.]+ GB/);
  });

  it('a heartbeat ack carries neither field and erases nothing', async () => {
    const beat = hub.of('heartbeat').length;
    await hub.waitFor((f) => f.type === 'heartbeat', 'two more heartbeats', 10_000, hub.frames.indexOf(hub.of('heartbeat')[beat - 1]!) + 1);
    const s = await bridge.invoke<AgentSnapshot>('snapshot.get');
    expect(s.hubView?.notRegistered).toEqual(['lms-model']);
    expect(s.hubView?.upgrade?.latest).toBe('0.6.0');
  });

  it('a notice whose model_id carries control characters is kept, the id cleaned', async () => {
    hub.send({
      type: 'notice',
      payload: { event: 'traffic_withheld', severity: 'warning', model_id: 'qwen-gguf\r\nBcc: x@y', message: 'Traffic to this model is withheld.' },
    });
    const n = await eventually(
      async () => (await bridge.invoke<HubNoticeView[]>('notices.list')).find((x) => x.event === 'traffic_withheld'),
      'the notice kept',
    );
    expect(n.modelId).toBe('qwen-ggufBccxy');
    expect(hub.connected).toBe(true);
  });

  it("doctor reads the hub's last word: the unregistered model as a problem, the upgrade as a note", async () => {
    // Run last: doctor dials the hub stand-in, which takes the newest connection. Not spawnSync: the
    // stand-ins doctor asks live in this process.
    const child = spawn(process.execPath, [path.join(repoRoot, 'bin', 'swan-provider.js'), 'doctor', '--home', agent.home], {
      env: { PATH: process.env.PATH ?? '', HOME: files.userHome },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    const status = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    const r = { stdout, status };
    expect(r.stdout).toMatch(/✓ the hub's last register ack \(.+ UTC\) registered 4 model\(s\), not lms-model/);
    expect(r.stdout).toMatch(/✗ The hub did not register lms-model/);
    expect(r.stdout).toMatch(
      /note: the hub advises an upgrade, provider release 0\.6\.0 is current \(this node speaks 0\.5\.0\): Provider 0\.6\.0 routes image requests\./,
    );
    expect(r.status).toBe(1);
  });
});

describe('before registration', () => {
  let h: GoHub | undefined;
  let a: RunningAgent | undefined;
  afterAll(async () => {
    await a?.stop();
    await h?.close();
  });

  it('a failed ack and an error frame are logged and the link kept: the acceptance that follows registers on the same connection', async () => {
    h = await startGoHub({
      token: KEY,
      beforeFirstAck: [
        { type: 'ack', payload: { request_id: '', success: false, message: 'declarations still loading, retrying' } },
        { type: 'error', payload: { code: 503, message: 'registry busy' } },
      ],
    });
    a = await spawnDeclareAgent({
      hub: h,
      models: { 'lms-model': { endpoint: engines.lmstudio.url, local_model: 'gemma-2-9b-it' } },
      userHome: files.userHome,
    });
    await h.waitFor((f) => f.type === 'heartbeat', 'a heartbeat: registered', 40_000);
    expect(h.connections).toBe(1);
    expect(a.output()).toContain('the hub refused registration: declarations still loading, retrying');
    expect(a.output()).toContain('the hub sent an error while registering: registry busy (code 503)');
  });
});
