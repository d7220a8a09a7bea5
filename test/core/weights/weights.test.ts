// The weights service over real files: Go's manifest shape and composite, each file hashed once (by path,
// size and mtime, across restarts), again when it changes, on a worker thread that leaves the agent's
// event loop free, with progress.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryLog } from '../../../src/core/base/log';
import { WorkerHasher, type FileHasher } from '../../../src/core/weights/hasher';
import { walk } from '../../../src/core/weights/locate';
import { compositeHash, ownManifestPath, readGoManifest } from '../../../src/core/weights/manifest';
import { matchFile, Weights, type WeightsTarget } from '../../../src/core/weights/weights';
import { until } from '../../support/stack';
import { safetensors } from '../../support/weight-files';

const sha = (s: string | Buffer) => createHash('sha256').update(s).digest('hex');
let root: string;

beforeAll(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-weights-'));
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

/** A thread's nice value, from its /proc stat line (the 19th field; the name before it may hold spaces). */
function niceOf(statFile: string): number {
  try {
    return Number(fs.readFileSync(statFile, 'utf8').split(') ')[1]!.split(' ')[16]);
  } catch {
    return Number.NaN;
  }
}

/** The real worker hasher, counting the files it is asked to read. */
function counting(): FileHasher & { files: string[] } {
  const real = new WorkerHasher({ progressMs: 5 });
  const files: string[] = [];
  return { files, hash: (f, p) => (files.push(f), real.hash(f, p)), stop: () => real.stop() };
}

function modelFolder(name: string, files: Record<string, string | Buffer>): WeightsTarget['location'] {
  const dir = path.join(root, name);
  fs.mkdirSync(dir, { recursive: true });
  for (const [f, body] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
    fs.writeFileSync(path.join(dir, f), body);
  }
  return { ok: true, located: { root: dir, files: walk(dir), via: 'test' } };
}

describe('the manifest (Go internal/models/download.go)', () => {
  it('composite = sha256 of "filename:hash\\n" lines in byte order of the names; "" for none', () => {
    const files = [
      { filename: 'b.safetensors', hash: '22' },
      { filename: 'B.json', hash: '11' },
      { filename: 'a.bin', hash: '33' },
    ];
    // Byte order: upper case before lower case, as Go's string `<`.
    expect(compositeHash(files)).toBe(sha('B.json:11\na.bin:33\nb.safetensors:22\n'));
    expect(compositeHash([])).toBe('');
  });

  it("reads a Go node's manifest under ~/.swan/models/<org>/<name>, and never a model id that leaves that folder", () => {
    const go = path.join(root, 'go', '.swan', 'models');
    fs.mkdirSync(path.join(go, 'org', 'name'), { recursive: true });
    fs.writeFileSync(
      path.join(go, 'org', 'name', '.swan-hash-manifest.json'),
      JSON.stringify({ model_id: 'org/name', composite_hash: 'SHA256:' + 'AB'.repeat(32), algorithm: 'sha256', files: [] }),
    );
    const r = readGoManifest(go, 'org/name');
    expect(r.ok && r.manifest.composite_hash).toBe('ab'.repeat(32));
    expect(readGoManifest(go, 'org/absent')).toEqual({ ok: false, absent: true });
    expect(readGoManifest(go, '../../etc')).toEqual({ ok: false, absent: true });
    fs.mkdirSync(path.join(go, 'bad'), { recursive: true });
    fs.writeFileSync(path.join(go, 'bad', '.swan-hash-manifest.json'), '{"composite_hash": 5}');
    expect(readGoManifest(go, 'bad')).toMatchObject({ ok: false, absent: false });
  });
});

describe('Weights', () => {
  it('hashes each file once into a Go-shaped manifest under the home, and a restart finds them hashed', async () => {
    const home = path.join(root, 'home-once');
    const big = safetensors(Buffer.alloc(5 * 1024 * 1024, 3));
    const loc = modelFolder('once', { 'model.safetensors': big, 'small.safetensors': safetensors('{}'), 'config.json': '{}' });
    const h1 = counting();
    const w1 = new Weights({ dir: path.join(home, 'weights'), log: memoryLog().child('w'), hasher: h1 });
    w1.sync([{ model: 'org/once', location: loc }]);
    await until(() => w1.status('org/once')?.state === 'verified', 'verified');
    expect(h1.files).toHaveLength(2);
    const want = compositeHash([
      { filename: 'model.safetensors', hash: sha(big) },
      { filename: 'small.safetensors', hash: sha(safetensors('{}')) },
    ]);
    expect(w1.compositeHash('org/once')).toBe(want);
    const onDisk = JSON.parse(fs.readFileSync(ownManifestPath(path.join(home, 'weights', 'manifests'), 'org/once'), 'utf8')) as Record<string, unknown>;
    expect(onDisk).toMatchObject({
      model_id: 'org/once',
      composite_hash: want,
      algorithm: 'sha256',
      files: [
        { filename: 'model.safetensors', size_bytes: big.length },
        { filename: 'small.safetensors', hash: sha(safetensors('{}')) },
      ],
    });
    expect(typeof onDisk.created_at).toBe('string');
    // The same files synced again: nothing is read.
    w1.sync([{ model: 'org/once', location: loc }]);
    await w1.close();
    expect(h1.files).toHaveLength(2);
    // A restart: known by path, size and mtime.
    const h2 = counting();
    const w2 = new Weights({ dir: path.join(home, 'weights'), log: memoryLog().child('w'), hasher: h2 });
    w2.sync([{ model: 'org/once', location: loc }]);
    expect(w2.status('org/once')?.state).toBe('verified');
    expect(w2.compositeHash('org/once')).toBe(want);
    // A file that changed is read again (and only it).
    fs.writeFileSync(path.join(root, 'once', 'small.safetensors'), safetensors('{"a":1}'));
    w2.sync([{ model: 'org/once', location: loc }]);
    await until(() => w2.status('org/once')?.state === 'verified', 'verified again');
    expect(h2.files).toEqual([fs.realpathSync(path.join(root, 'once', 'small.safetensors'))]);
    expect(w2.lookup('org/once', 'small.safetensors')).toEqual({ state: 'known', hash: sha(safetensors('{"a":1}')) });
    // The config.json beside them is never hashed.
    expect(w2.lookup('org/once', 'config.json').state).not.toBe('known');
    await w2.close();
  });

  it('hashes on a worker thread: the event loop keeps turning while a large file is read, and progress is reported', async () => {
    const dir = path.join(root, 'big');
    fs.mkdirSync(dir);
    const file = path.join(dir, 'big.gguf');
    const fd = fs.openSync(file, 'w');
    fs.ftruncateSync(fd, 128 * 1024 * 1024);
    fs.closeSync(fd);
    const w = new Weights({
      dir: path.join(root, 'home-big', 'weights'),
      log: memoryLog().child('w'),
      hasher: new WorkerHasher({ progressMs: 5 }),
      progressEventMs: 1,
    });
    let ticks = 0;
    let sawProgress = 0;
    const timer = setInterval(() => ticks++, 2);
    w.on('progress', () => {
      const v = w.view();
      if (v.hashing && v.hashing.doneBytes > 0 && v.hashing.doneBytes < v.hashing.totalBytes) sawProgress++;
    });
    w.sync([{ model: 'big', location: { ok: true, located: { root: dir, files: [{ filename: 'big.gguf', path: file }], via: 'test' } } }]);
    const startTicks = ticks;
    // On Linux the hashing thread has lowered its own priority (nice 19); this thread keeps its own.
    const nices = (): number[] => (process.platform === 'linux' ? fs.readdirSync('/proc/self/task').map((t) => niceOf(`/proc/self/task/${t}/stat`)) : []);
    let sawNice19 = process.platform !== 'linux';
    await until(
      () => {
        if (!sawNice19 && w.status('big')?.state === 'hashing') sawNice19 = nices().includes(19);
        return w.status('big')?.state === 'verified';
      },
      'the big file hashed',
      60_000,
    );
    expect(sawNice19).toBe(true);
    if (process.platform === 'linux') expect(niceOf('/proc/thread-self/stat')).toBe(0);
    clearInterval(timer);
    expect(ticks - startTicks).toBeGreaterThan(3);
    expect(sawProgress).toBeGreaterThan(0);
    expect(w.status('big')).toMatchObject({ state: 'verified', doneBytes: 128 * 1024 * 1024, totalBytes: 128 * 1024 * 1024 });
    expect(w.view().hashing).toBeUndefined();
    await w.close();
  });

  it('an unlocated model says why; a model that leaves the set is forgotten', async () => {
    const w = new Weights({ dir: path.join(root, 'home-gone', 'weights'), log: memoryLog().child('w') });
    w.sync([{ model: 'a', location: { ok: false, reason: 'LM Studio does not say where its model files are' } }, { model: 'b' }]);
    expect(w.status('a')).toMatchObject({ state: 'unlocated', reason: 'LM Studio does not say where its model files are' });
    expect(w.status('b')).toMatchObject({ state: 'unlocated', reason: 'not located yet' });
    w.sync([{ model: 'b' }]);
    expect(w.status('a')).toBeUndefined();
    await w.close();
  });
});

describe("which file a hub's filename means", () => {
  const files = [{ filename: 'sub/config.json' }, { filename: 'model.safetensors' }];
  it('the same name, else a unique base name', () => {
    expect(matchFile(files, 'model.safetensors')).toBe(files[1]);
    expect(matchFile(files, './sub/config.json')).toBe(files[0]);
    expect(matchFile(files, 'config.json')).toBe(files[0]);
    expect(matchFile(files, 'tokenizer.json')).toBeUndefined();
  });
  it('the one GGUF a model is served from, whatever GGUF name the catalogue uses for it (a llama.cpp file or an Ollama blob)', () => {
    expect(matchFile([{ filename: 'tiny.gguf' }], 'Qwen2.5-0.5B-Instruct-Q4_K_M.gguf')).toEqual({ filename: 'tiny.gguf' });
    expect(matchFile([{ filename: `sha256-${'a'.repeat(64)}` }], 'model-q8_0.gguf')).toEqual({ filename: `sha256-${'a'.repeat(64)}` });
    expect(matchFile([{ filename: 'a.gguf' }, { filename: 'b.gguf' }], 'c.gguf')).toBeUndefined();
    expect(matchFile([{ filename: 'tiny.gguf' }], 'config.json')).toBeUndefined();
  });
});
