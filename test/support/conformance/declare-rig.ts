// The declare suite's world: a temp user home holding model files where engines keep them (a GGUF, a Hugging
// Face cache snapshot linked into its blobs, an Ollama blob, a Go node's manifest), engine stand-ins that
// answer metadata as the engines document it (llama.cpp GET /props, vLLM GET /v1/models with root and
// max_model_len, Ollama POST /api/show, LM Studio saying nothing of its files), the CLI-run agent with its
// console on a token file, and the console's bridge as a program reaches it (Authorization: Bearer).
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import type { ConfigFile } from '../../../src/core/config/config';
import { compositeHash } from '../../../src/core/weights/manifest';
import { writeConfigToml } from '../config-toml';
import { startTestEngine, type TestEngine } from '../engine-server';
import { freePort, until } from '../stack';
import { repoRoot } from '../traces';
import type { GoHub } from './go-hub';
import { safetensors } from '../weight-files';

const BIN = path.join(repoRoot, 'bin', 'swan-provider.js');
export const KEY = 'sk-prov-declare-0000000000';
export const sha = (b: string | Buffer): string => createHash('sha256').update(b).digest('hex');

/** Deterministic bytes standing for weights (not zeros: a wrong offset would change the hash); `gguf` starts them with GGUF's magic. */
function weightBytes(n: number, seed: number, gguf = false): Buffer {
  const b = Buffer.alloc(n);
  let x = seed;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    b[i] = x >>> 24;
  }
  if (gguf) b.write('GGUF', 0, 'latin1');
  return b;
}

export interface ModelFiles {
  userHome: string;
  gguf: { path: string; bytes: Buffer };
  hf: { snapshot: string; rev: string; weights: Buffer; config: string; containerRoot: string };
  ollama: { blob: string; bytes: Buffer };
  go: { composite: string; fileHash: string };
}

/** The files, laid out as llama.cpp, the Hugging Face cache, Ollama and a Go node keep them. */
export function layOutModelFiles(): ModelFiles {
  const userHome = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-declare-user-'));
  const gguf = { path: path.join(userHome, 'models', 'qwen2.5-0.5b-instruct-q4_k_m.gguf'), bytes: weightBytes(3 * 1024 * 1024 + 5, 1, true) };
  fs.mkdirSync(path.dirname(gguf.path), { recursive: true });
  fs.writeFileSync(gguf.path, gguf.bytes);

  const rev = '989aa7980e4cf806f80c7fef2b1adb7bc71aa306';
  const repo = path.join(userHome, '.cache', 'huggingface', 'hub', 'models--Qwen--Qwen2.5-1.5B-Instruct');
  const snapshot = path.join(repo, 'snapshots', rev);
  // A safetensors file as it begins (its header's length, then its JSON header): only weight files are hashed.
  const weights = safetensors(weightBytes(5 * 1024 * 1024 + 3, 2));
  const config = JSON.stringify({ architectures: ['Qwen2ForCausalLM'], torch_dtype: 'bfloat16' });
  fs.mkdirSync(path.join(repo, 'blobs'), { recursive: true });
  fs.mkdirSync(path.join(repo, 'refs'), { recursive: true });
  fs.mkdirSync(snapshot, { recursive: true });
  fs.writeFileSync(path.join(repo, 'refs', 'main'), rev);
  fs.writeFileSync(path.join(repo, 'blobs', sha(weights)), weights);
  fs.writeFileSync(path.join(repo, 'blobs', 'c0ffee'), config);
  fs.symlinkSync(`../../blobs/${sha(weights)}`, path.join(snapshot, 'model.safetensors'));
  fs.symlinkSync('../../blobs/c0ffee', path.join(snapshot, 'config.json'));

  const ollamaBytes = weightBytes(2 * 1024 * 1024 + 7, 3, true);
  const blob = `sha256-${sha(ollamaBytes)}`;
  fs.mkdirSync(path.join(userHome, '.ollama', 'models', 'blobs'), { recursive: true });
  fs.writeFileSync(path.join(userHome, '.ollama', 'models', 'blobs', blob), ollamaBytes);

  // A Go node's download of org/go-model: its manifest lists the hub's own file names and hashes.
  const fileHash = sha('go-node-weights');
  const files = [{ filename: 'model-00001-of-00001.safetensors', hash: fileHash, size_bytes: 15 }];
  const composite = compositeHash(files);
  const goDir = path.join(userHome, '.swan', 'models', 'org', 'go-model');
  fs.mkdirSync(goDir, { recursive: true });
  fs.writeFileSync(
    path.join(goDir, '.swan-hash-manifest.json'),
    JSON.stringify({ model_id: 'org/go-model', composite_hash: composite, algorithm: 'sha256', files, created_at: '2026-11-01T10:00:00Z' }, null, 2),
  );

  return {
    userHome,
    gguf,
    hf: { snapshot, rev, weights, config, containerRoot: `/workspace/hf-cache/models--Qwen--Qwen2.5-1.5B-Instruct/snapshots/${rev}` },
    ollama: { blob, bytes: ollamaBytes },
    go: { composite, fileHash },
  };
}

export interface DeclareEngines {
  llama: TestEngine;
  vllm: TestEngine;
  ollama: TestEngine;
  lmstudio: TestEngine;
  goVllm: TestEngine;
  all(): TestEngine[];
}

export const LLAMA_NAME = 'qwen2.5-0.5b-instruct-q4_k_m.gguf';
export const VLLM_ID = 'Qwen/Qwen2.5-1.5B-Instruct';

/** Engine stand-ins answering their metadata routes with the shapes their docs (and our captures) show. */
export async function startDeclareEngines(f: ModelFiles): Promise<DeclareEngines> {
  const llama = await startTestEngine({
    engineType: 'llamacpp',
    models: [LLAMA_NAME],
    routes: {
      // llama-server's /props (../shared/engines/llama.cpp/captures/props.json), with this machine's path.
      'GET /props': {
        default_generation_settings: { n_ctx: 4096, params: { temperature: 0.8 } },
        total_slots: 2,
        model_alias: LLAMA_NAME,
        model_ftype: 'Q4_K - Medium',
        model_path: f.gguf.path,
        modalities: { vision: true, video: false, audio: false },
        build_info: 'b10470-34af94cd9',
        is_sleeping: false,
      },
    },
  });
  const vllm = await startTestEngine({
    engineType: 'vllm',
    routes: {
      // vLLM's /v1/models (../shared/engine-traces/vllm-models.json): root is the container's cache path.
      'GET /v1/models': {
        object: 'list',
        data: [{ id: VLLM_ID, object: 'model', created: 1784186815, owned_by: 'vllm', root: f.hf.containerRoot, parent: null, max_model_len: 4096 }],
      },
    },
  });
  const ollama = await startTestEngine({
    engineType: 'ollama',
    models: ['nomic-embed-text:latest'],
    routes: {
      // Ollama's POST /api/show (docs/api.md "Show Model Information"): the modelfile names its blob.
      'POST /api/show': {
        modelfile: `# Modelfile generated by "ollama show"\n# To build a new Modelfile based on this, replace FROM with:\n# FROM nomic-embed-text:latest\n\nFROM /root/.ollama/models/blobs/${f.ollama.blob}\nTEMPLATE {{ .Prompt }}\nPARAMETER num_ctx 8192\n`,
        parameters: 'num_ctx                        8192',
        template: '{{ .Prompt }}',
        details: { parent_model: '', format: 'gguf', family: 'nomic-bert', families: ['nomic-bert'], parameter_size: '137M', quantization_level: 'Q8_0' },
        model_info: { 'general.architecture': 'nomic-bert', 'nomic-bert.context_length': 2048 },
        capabilities: ['embedding'],
      },
    },
  });
  const lmstudio = await startTestEngine({ engineType: 'lmstudio', models: ['gemma-2-9b-it'] });
  // A second vLLM for the model a Go node downloaded (its manifest is what the node proves).
  const goVllm = await startTestEngine({
    engineType: 'vllm',
    routes: { 'GET /v1/models': { object: 'list', data: [{ id: 'org/go-model', object: 'model', root: '/models/go-model', max_model_len: 8192 }] } },
  });
  return { llama, vllm, ollama, lmstudio, goVllm, all: () => [llama, vllm, ollama, lmstudio, goVllm] };
}

/** models.json of the declare suite: hub id -> engine. */
export function declareModels(e: DeclareEngines): Record<string, Record<string, unknown>> {
  return {
    'qwen-gguf': { endpoint: e.llama.url, local_model: LLAMA_NAME },
    [VLLM_ID]: { endpoint: `${e.vllm.url}/v1`, category: 'text-generation' },
    'nomic-embed-text': { endpoint: e.ollama.url, local_model: 'nomic-embed-text:latest' },
    'lms-model': { endpoint: e.lmstudio.url, local_model: 'gemma-2-9b-it' },
    'org/go-model': { endpoint: e.goVllm.url },
  };
}

export interface RunningAgent {
  child: ChildProcess;
  home: string;
  consolePort: number;
  token(): string;
  output(): string;
  stop(): Promise<void>;
}

export async function spawnDeclareAgent(o: {
  hub: GoHub;
  models: Record<string, Record<string, unknown>>;
  userHome: string;
  agent?: ConfigFile['Agent'];
}): Promise<RunningAgent> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-declare-'));
  fs.writeFileSync(path.join(home, 'models.json'), JSON.stringify(o.models, null, 2));
  // The hub's upgrade advice starts an update check: it goes to a closed local port, never to GitHub.
  fs.writeFileSync(path.join(home, 'settings.json'), JSON.stringify({ updateFeedUrl: 'http://127.0.0.1:9/repos/none/none' }));
  writeConfigToml(home, {
    API: { NodeName: 'declare' },
    Inference: { WebSocketURL: o.hub.wsUrl, ServiceURL: o.hub.url, ApiKey: KEY },
    Agent: { Discovery: false, HeartbeatIntervalSeconds: 0.5, HealthCheckIntervalSeconds: 1, ...o.agent },
  });
  const consolePort = await freePort();
  const tokenFile = path.join(home, 'console-token');
  // HOME is the temp user home: ~/.swan/models, ~/.cache/huggingface and ~/.ollama are the suite's own.
  const child = spawn(
    process.execPath,
    [BIN, 'run', '--home', home, '--no-discovery', '--console', `127.0.0.1:${consolePort}`, '--console-token-file', tokenFile],
    {
      env: { PATH: process.env.PATH ?? '', HOME: o.userHome, LANG: 'C' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    home,
    consolePort,
    token: () => fs.readFileSync(tokenFile, 'utf8').trim(),
    output: () => out,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(t);
      fs.rmSync(home, { recursive: true, force: true });
    },
  };
}

/** The console's bridge, as the owner's program reaches it: Authorization: Bearer <console token>. */
export class ConsoleBridge {
  private next = 1;
  private readonly waiting = new Map<number, (r: { ok: boolean; value?: unknown; error?: string }) => void>();

  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (raw) => {
      const m = JSON.parse(String(raw)) as { id?: number; reply?: { ok: boolean; value?: unknown; error?: string } };
      if (typeof m.id === 'number' && m.reply) this.waiting.get(m.id)?.(m.reply);
    });
  }

  static async open(agent: RunningAgent): Promise<ConsoleBridge> {
    await until(() => /console: http/.test(agent.output()), 'the console listening', 40_000);
    const ws = new WebSocket(`ws://127.0.0.1:${agent.consolePort}/bridge`, { headers: { authorization: `Bearer ${agent.token()}` } });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return new ConsoleBridge(ws);
  }

  async invoke<T>(channel: string, args: Record<string, unknown> = {}): Promise<T> {
    const id = this.next++;
    const reply = await new Promise<{ ok: boolean; value?: unknown; error?: string }>((resolve) => {
      this.waiting.set(id, resolve);
      this.ws.send(JSON.stringify({ id, channel, args }));
    });
    this.waiting.delete(id);
    if (!reply.ok) throw new Error(`${channel}: ${reply.error}`);
    return reply.value as T;
  }

  close(): void {
    this.ws.close();
  }
}

/** Polls an async value (every 50 ms) until it is there. */
export async function eventually<T>(fn: () => Promise<T | undefined | false>, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
