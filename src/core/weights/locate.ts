// Where an engine serves a model from, and what its own metadata says of it, read from the engine as its
// documentation describes:
//   llama.cpp   GET /props: model_path (the GGUF; split GGUFs bring their sibling shards), model_ftype
//               ("Q4_K - Medium", "all F32"), modalities {vision, audio}
//   vLLM        GET /v1/models: the model's `root` (a folder, or a Hugging Face id / cache snapshot path)
//   SGLang      GET /v1/models `root`, else GET /get_model_info `model_path`
//   TGI         GET /info: model_id (a Hugging Face id), model_dtype
//   Ollama      POST /api/show {model}: the modelfile's FROM lines (its blobs), details.quantization_level,
//               capabilities (completion, vision, embedding …)
// Only weight files are ever hashed, so a hub can never learn the hash of another file of the owner's (an
// engine is a local program, but one at an address the owner added need not be honest, and a hostile one
// named ~/.docker, which holds a config.json, as its model's folder): a GGUF must start with the GGUF
// magic; a folder must look like a model's (weight files with their format's magic, or a weight index, at
// its top; never the filesystem root, a home folder, a dot-folder or a known config folder), and of it only
// weight files whose first bytes are their format's, links followed only while they stay in the folder or
// its Hugging Face repo's blobs. A config.json, a tokenizer, a .txt or a .py is read, never hashed. A Hugging Face id or a cache path from another machine (a container's /root/.cache) is looked up
// in this machine's cache. LM Studio and generic servers do not say: unlocated.
import fs from 'node:fs';
import path from 'node:path';
import type { EngineType } from '../../shared/types';
import { MAX_JSON_DEPTH, parseJson } from '../http/bounded-json';
import type { EngineModalities } from './declarations';
import type { Location, LocatedFiles } from './weights';

/** Engine metadata reads (through the one engine HTTP client): a JSON object, or undefined on any failure. */
export interface EngineReader {
  get(url: string, path: string, apiKey?: string): Promise<Record<string, unknown> | undefined>;
  post(url: string, path: string, body: unknown, apiKey?: string): Promise<Record<string, unknown> | undefined>;
}

export interface ModelFacts {
  location: Location;
  /** The engine's (or the model's config.json's) word on the weights' precision, as it says it. */
  quantization?: string;
  modalities?: EngineModalities;
}

export interface LocateEnv {
  /** The agent's environment: HOME, HF_HOME, HF_HUB_CACHE, XDG_CACHE_HOME, OLLAMA_MODELS. */
  env: NodeJS.ProcessEnv;
}

const MAX_FILES = 5000;
const MAX_DEPTH = 6;
/** config.json is read for its quantization only: a bigger one is not a model config. */
const MAX_CONFIG_BYTES = 1024 * 1024;

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);
const obj = (v: unknown): Record<string, unknown> | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined);

export async function locateModel(
  engine: { url: string; type?: EngineType; apiKey?: string },
  engineModel: string,
  read: EngineReader,
  where: LocateEnv,
): Promise<ModelFacts> {
  switch (engine.type) {
    case 'llamacpp':
      return llamaCpp(await read.get(engine.url, '/props', engine.apiKey));
    case 'ollama':
      return ollama(await read.post(engine.url, '/api/show', { model: engineModel }, engine.apiKey), where);
    case 'vllm':
    case 'sglang': {
      const models = await read.get(engine.url, '/v1/models', engine.apiKey);
      let root = str(modelEntry(models, engineModel)?.root);
      if (!root && engine.type === 'sglang') root = str((await read.get(engine.url, '/get_model_info', engine.apiKey))?.model_path);
      const via = engine.type === 'vllm' ? 'vLLM /v1/models root' : 'SGLang model path';
      if (!root)
        return {
          location: { ok: false, reason: `${engine.type === 'vllm' ? 'vLLM' : 'SGLang'} does not say where this model's files are (no root in /v1/models)` },
        };
      return huggingFace(root, via, where);
    }
    case 'tgi': {
      const info = await read.get(engine.url, '/info', engine.apiKey);
      const modelId = str(info?.model_id);
      if (!modelId) return { location: { ok: false, reason: 'TGI does not say which model it serves (no model_id in /info)' } };
      const facts = huggingFace(modelId, 'TGI /info model_id', where);
      const dtype = str(info?.model_dtype)?.replace(/^torch\./, '');
      return dtype && !facts.quantization ? { ...facts, quantization: dtype } : facts;
    }
    default:
      return { location: { ok: false, reason: `${engine.type === 'lmstudio' ? 'LM Studio' : 'this engine'} does not say where its model files are` } };
  }
}

function modelEntry(models: Record<string, unknown> | undefined, id: string): Record<string, unknown> | undefined {
  const data = Array.isArray(models?.data) ? (models.data as unknown[]).map(obj).filter((m): m is Record<string, unknown> => !!m) : [];
  return data.find((m) => m.id === id) ?? (data.length === 1 ? data[0] : undefined);
}

// ---- llama.cpp ----

function llamaCpp(props: Record<string, unknown> | undefined): ModelFacts {
  if (!props) return { location: { ok: false, reason: 'llama.cpp did not answer /props' } };
  const mods = obj(props.modalities);
  const modalities: EngineModalities = { ...(mods?.vision === true ? { vision: true } : {}), ...(mods?.audio === true ? { audio: true } : {}) };
  const quantization = str(props.model_ftype);
  const base = { ...(quantization ? { quantization } : {}), ...(Object.keys(modalities).length ? { modalities } : {}) };
  const modelPath = str(props.model_path);
  if (!modelPath) return { ...base, location: { ok: false, reason: 'llama.cpp /props names no model_path' } };
  if (!path.isAbsolute(modelPath) || !isFile(modelPath))
    return { ...base, location: { ok: false, reason: `llama.cpp serves ${modelPath}, which is not a file on this machine` } };
  if (!isGguf(modelPath)) return { ...base, location: { ok: false, reason: `llama.cpp names ${modelPath}, which is not a GGUF file` } };
  return { ...base, location: { ok: true, located: ggufFiles(modelPath, 'llama.cpp /props model_path') } };
}

/** A GGUF and, when it is one shard of a split model (name-00001-of-00003.gguf), its sibling shards. */
function ggufFiles(file: string, via: string): LocatedFiles {
  const dir = path.dirname(file);
  const name = path.basename(file);
  const split = /^(.*)-(\d{5})-of-(\d{5})\.gguf$/i.exec(name);
  const names = [name];
  if (split) {
    const total = Number(split[3]);
    for (let i = 1; i <= total && i <= 1000; i++) {
      const shard = `${split[1]}-${String(i).padStart(5, '0')}-of-${split[3]}.gguf`;
      if (shard !== name && isFile(path.join(dir, shard)) && isGguf(path.join(dir, shard))) names.push(shard);
    }
  }
  return { root: dir, files: names.sort().map((n) => ({ filename: n, path: path.join(dir, n) })), via };
}

// ---- Ollama ----

function ollama(show: Record<string, unknown> | undefined, where: LocateEnv): ModelFacts {
  if (!show) return { location: { ok: false, reason: 'Ollama did not answer /api/show for this model' } };
  const caps = Array.isArray(show.capabilities) ? show.capabilities.filter((c): c is string => typeof c === 'string') : [];
  const modalities: EngineModalities = {
    ...(caps.includes('embedding') && !caps.includes('completion') ? { embedding: true } : {}),
    ...(caps.includes('vision') ? { vision: true } : {}),
  };
  const quantization = str(obj(show.details)?.quantization_level);
  const base = { ...(quantization ? { quantization } : {}), ...(Object.keys(modalities).length ? { modalities } : {}) };
  // "FROM /root/.ollama/models/blobs/sha256-…": the model's blob (and a projector's), as Ollama wrote them.
  const blobs = [...(str(show.modelfile) ?? '').matchAll(/^FROM\s+(\S+)\s*$/gm)]
    .map((m) => m[1] as string)
    .filter((p) => /(^|[\\/])sha256[-:][0-9a-f]{64}$/.test(p));
  if (blobs.length === 0) return { ...base, location: { ok: false, reason: "Ollama's /api/show names no model blob" } };
  const local = ollamaBlobsDir(where.env);
  const files: LocatedFiles['files'] = [];
  for (const b of blobs) {
    const name = (b.split(/[\\/]/).pop() as string).replace(':', '-');
    const p = path.isAbsolute(b) && isFile(b) ? b : local && isFile(path.join(local, name)) ? path.join(local, name) : undefined;
    if (!p) return { ...base, location: { ok: false, reason: `Ollama's blob ${name.slice(0, 19)}… is not on this machine (${b})` } };
    if (!isGguf(p)) return { ...base, location: { ok: false, reason: `Ollama's blob ${name.slice(0, 19)}… is not a GGUF file` } };
    if (!files.some((f) => f.filename === name)) files.push({ filename: name, path: p });
  }
  return { ...base, location: { ok: true, located: { root: path.dirname(files[0]!.path), files, via: 'Ollama /api/show' } } };
}

function ollamaBlobsDir(env: NodeJS.ProcessEnv): string | undefined {
  if (env.OLLAMA_MODELS) return path.join(env.OLLAMA_MODELS, 'blobs');
  const home = env.HOME || env.USERPROFILE;
  return home ? path.join(home, '.ollama', 'models', 'blobs') : undefined;
}

// ---- Hugging Face folders (vLLM, SGLang, TGI) ----

/** This machine's Hugging Face hub cache (HF_HUB_CACHE > HF_HOME/hub > XDG_CACHE_HOME/huggingface/hub > ~/.cache/huggingface/hub). */
export function hfCacheDir(env: NodeJS.ProcessEnv): string | undefined {
  if (env.HF_HUB_CACHE) return env.HF_HUB_CACHE;
  if (env.HF_HOME) return path.join(env.HF_HOME, 'hub');
  if (env.XDG_CACHE_HOME) return path.join(env.XDG_CACHE_HOME, 'huggingface', 'hub');
  const home = env.HOME || env.USERPROFILE;
  return home ? path.join(home, '.cache', 'huggingface', 'hub') : undefined;
}

function huggingFace(root: string, via: string, where: LocateEnv): ModelFacts {
  const dir = resolveModelRoot(root, where.env);
  if (!dir) return { location: { ok: false, reason: `${via} is ${root}, which is neither a folder on this machine nor in its Hugging Face cache` } };
  if (isFile(dir)) {
    if (!isGguf(dir)) return { location: { ok: false, reason: `${via} is ${dir}, a file that is not a GGUF` } };
    return { location: { ok: true, located: ggufFiles(dir, via) } };
  }
  if (!looksLikeModelFolder(dir, where.env))
    return {
      location: {
        ok: false,
        reason: `${via} is ${dir}, which does not look like a model's folder (no weight files at its top, or a dot-folder or config folder)`,
      },
    };
  const files = walk(dir);
  if (files.length === 0) return { location: { ok: false, reason: `${via} is ${dir}, which holds no readable weight files` } };
  const quantization = configQuantization(dir);
  return { ...(quantization ? { quantization } : {}), location: { ok: true, located: { root: dir, files, via } } };
}

/**
 * A model root as this machine has it: the path itself; else, for a Hugging Face cache snapshot path of
 * another machine (`…/models--org--name/snapshots/<rev>`) or a Hugging Face id (`org/name`), the snapshot in
 * this machine's cache (the same revision, else the one refs/main names, else the only one).
 */
export function resolveModelRoot(root: string, env: NodeJS.ProcessEnv): string | undefined {
  if (path.isAbsolute(root) && exists(root)) return root;
  const cache = hfCacheDir(env);
  if (!cache) return undefined;
  const snap = /(?:^|[\\/])(models--[^\\/]+)[\\/]snapshots[\\/]([^\\/]+)/.exec(root);
  let repo: string | undefined;
  let rev: string | undefined;
  if (snap) {
    repo = snap[1];
    rev = snap[2];
  } else if (/^[\w.-]+\/[\w.-]+$/.test(root)) repo = `models--${root.replace('/', '--')}`;
  else return undefined;
  const repoDir = path.join(cache, repo as string);
  if (rev && isDir(path.join(repoDir, 'snapshots', rev))) return path.join(repoDir, 'snapshots', rev);
  let ref: string | undefined;
  try {
    ref = fs.readFileSync(path.join(repoDir, 'refs', 'main'), 'utf8').trim();
  } catch {
    /* no refs/main: the only snapshot, if there is one */
  }
  if (ref && /^[0-9a-f]{7,64}$/i.test(ref) && isDir(path.join(repoDir, 'snapshots', ref))) return path.join(repoDir, 'snapshots', ref);
  let snaps: string[] = [];
  try {
    snaps = fs.readdirSync(path.join(repoDir, 'snapshots')).filter((s) => isDir(path.join(repoDir, 'snapshots', s)));
  } catch {
    return undefined;
  }
  return snaps.length === 1 ? path.join(repoDir, 'snapshots', snaps[0] as string) : undefined;
}

/**
 * Where the real files of a model folder may live: the folder itself; for a Hugging Face cache snapshot
 * (whose files are links to ../../blobs/…) the repo folder models--org--name, which holds nothing but that model.
 */
export function linkRoot(realRoot: string): string {
  const m = /^(.*[\\/]models--[^\\/]+)[\\/]snapshots[\\/][^\\/]+$/.exec(realRoot);
  return m ? (m[1] as string) : realRoot;
}

/** Weight files: the only files a fingerprint is ever computed of (and only with their format's first bytes). */
const WEIGHT_FILE = /\.(safetensors|bin|pt|pth|gguf|ggml)$/i;
/** A sharded checkpoint's index (model.safetensors.index.json): a model's folder, though never hashed itself. */
const WEIGHT_INDEX = /\.(safetensors|bin|pt)\.index\.json$/i;
/** Dot-folders a model's files may live under (caches); every other dot-folder on the path is refused. */
const DOT_FOLDERS_ALLOWED = new Set(['.cache', '.ollama', '.lmstudio']);
/** Folders that hold configuration and credentials, whatever their parents: never a model's. */
const CONFIG_FOLDERS = new Set([
  '.ssh',
  '.docker',
  '.aws',
  '.kube',
  '.gnupg',
  '.config',
  '.azure',
  '.gcloud',
  '.git',
  '.password-store',
  '.npm',
  '.local',
  'etc',
]);

/** Whether a folder's path runs through a dot-folder other than a cache, or a known config folder. */
function underConfigFolder(real: string): boolean {
  const parts = real.split(/[\\/]/).filter(Boolean);
  return parts.some(
    (p, i) => CONFIG_FOLDERS.has(p.toLowerCase()) || (p.startsWith('.') && (i === parts.length - 1 || !DOT_FOLDERS_ALLOWED.has(p.toLowerCase()))),
  );
}

/**
 * A model's folder: weight files (with their format's first bytes) or a weight index at its top; not the
 * filesystem root or a home folder, not a dot-folder, nothing under a known config folder.
 */
export function looksLikeModelFolder(dir: string, env: NodeJS.ProcessEnv): boolean {
  let real: string;
  try {
    real = fs.realpathSync(dir);
  } catch {
    return false;
  }
  const homes = [env.HOME, env.USERPROFILE, path.parse(real).root].filter((h): h is string => !!h).map((h) => path.resolve(h));
  if (homes.includes(real) || underConfigFolder(real)) return false;
  try {
    return fs.readdirSync(real).some((n) => WEIGHT_INDEX.test(n) || (WEIGHT_FILE.test(n) && isWeightFile(path.join(real, n))));
  } catch {
    return false;
  }
}

/**
 * A file whose first bytes are a weight format's: GGUF / GGML magic, safetensors' 8-byte header length
 * followed by its JSON header, a PyTorch zip or pickle. Anything else named like one is never hashed.
 */
export function isWeightFile(file: string, name = path.basename(file)): boolean {
  let fd: number | undefined;
  try {
    if (!fs.statSync(file).isFile()) return false;
    fd = fs.openSync(file, 'r');
    const b = Buffer.alloc(9);
    const n = fs.readSync(fd, b, 0, 9, 0);
    // The name says the format (a Hugging Face snapshot's link names it; its blob has no extension).
    const ext = path.extname(name).toLowerCase();
    if (ext === '.gguf') return n >= 4 && b.toString('latin1', 0, 4) === 'GGUF';
    if (ext === '.ggml') return n >= 4 && ['lmgg', 'fmgg', 'tjgg', 'ggml'].includes(b.toString('latin1', 0, 4));
    if (ext === '.safetensors') return n === 9 && b.readBigUInt64LE(0) > 1n && b.readBigUInt64LE(0) < 100_000_000n && b[8] === 0x7b; // '{'
    // .bin / .pt / .pth: a PyTorch zip archive, or a pickle (protocol 2+ starts with 0x80).
    return n >= 4 && (b.toString('latin1', 0, 4) === 'PK\x03\x04' || b[0] === 0x80);
  } catch {
    return false;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** GGUF files start with the 4 bytes "GGUF". */
function isGguf(file: string): boolean {
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, 'r');
    const b = Buffer.alloc(4);
    return fs.readSync(fd, b, 0, 4, 0) === 4 && b.toString('latin1') === 'GGUF';
  } catch {
    return false;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** The folder's model files ('/'-separated names), links followed only while they stay inside linkRoot. */
export function walk(dir: string): LocatedFiles['files'] {
  let realRoot: string;
  try {
    realRoot = fs.realpathSync(dir);
  } catch {
    return [];
  }
  const allowed = linkRoot(realRoot);
  const out: LocatedFiles['files'] = [];
  const visit = (abs: string, rel: string, depth: number): void => {
    let names: string[];
    try {
      names = fs.readdirSync(abs).sort();
    } catch {
      return;
    }
    for (const n of names) {
      if (out.length >= MAX_FILES) return;
      if (n.startsWith('.')) continue; // .cache, .git, .gitattributes, our own and Go's manifests
      const p = path.join(abs, n);
      let real: string;
      try {
        real = fs.realpathSync(p);
      } catch {
        continue;
      }
      const relToAllowed = path.relative(allowed, real);
      if (relToAllowed.startsWith('..') || path.isAbsolute(relToAllowed)) continue; // a link out of the model's folder: never read
      const name = rel ? `${rel}/${n}` : n;
      if (isFile(real)) {
        if (WEIGHT_FILE.test(n) && isWeightFile(real, n)) out.push({ filename: name, path: p });
      } else if (isDir(real) && depth < MAX_DEPTH) visit(p, name, depth + 1);
    }
  };
  visit(realRoot, '', 0);
  return out;
}

/** A Hugging Face config.json's word on the weights' precision: its quantization_config, else torch_dtype. */
function configQuantization(dir: string): string | undefined {
  let cfg: Record<string, unknown> | undefined;
  try {
    const file = path.join(dir, 'config.json');
    if (fs.statSync(file).size > MAX_CONFIG_BYTES) return undefined;
    cfg = obj(parseJson(fs.readFileSync(file), { maxBytes: MAX_CONFIG_BYTES, maxDepth: MAX_JSON_DEPTH, maxKeys: 100_000 }));
  } catch {
    return undefined;
  }
  const q = obj(cfg?.quantization_config);
  if (q) {
    const method = str(q.quant_method)?.toLowerCase();
    const bits = typeof q.bits === 'number' ? q.bits : undefined;
    if (method === 'awq' || method === 'fp8' || method === 'mxfp4') return method;
    if ((method === 'gptq' || method === 'bitsandbytes') && (bits === 4 || bits === 8)) return `int${bits}`;
    if (method === 'bitsandbytes' && q.load_in_4bit === true) return 'int4';
    if (method === 'bitsandbytes' && q.load_in_8bit === true) return 'int8';
    return undefined; // quantized, but not in words this node can map: nothing rather than the dtype
  }
  return str(cfg?.torch_dtype) ?? str(cfg?.dtype);
}

function exists(p: string): boolean {
  try {
    fs.statSync(p);
    return true;
  } catch {
    return false;
  }
}

function isFile(p: string): boolean {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

function isDir(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}
