// Downloads from the Swan model repository (a stand-in written from the Go provider's reader): the wrapped
// answers, sha256 while the bytes arrive, resume with Range after a dropped connection and after a kill
// (a part left on disk), a mismatching file refused with no manifest, the disk checked first, cancel, and
// the Go-shaped manifest that the weights service reads for fingerprint challenges.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DownloadError } from '../../../src/core/downloads/download';
import { downloadModel, LOCK_FILENAME, type ModelProgress } from '../../../src/core/downloads/model-download';
import { fetchCatalog, parseModelFiles, RepositoryError, safeRelativePath } from '../../../src/core/downloads/repository';
import { compositeHash, MANIFEST_FILENAME, readGoManifest } from '../../../src/core/weights/manifest';
import { memoryLog } from '../../../src/core/base/log';
import { Weights } from '../../../src/core/weights/weights';
import { tempHome } from '../../support/stack';
import { bytesOf, sha256, SwanRepository } from '../../support/swan-repository';

const ID = 'swan-test/Tiny-Model';
const BIG = bytesOf(3 * 1024 * 1024 + 17, 7);
const SMALL = Buffer.from('{"architectures":["LlamaForCausalLM"]}\n');
const plenty = async (): Promise<number> => 1e15;

let repo: SwanRepository;
beforeAll(async () => {
  repo = await SwanRepository.start();
});
afterAll(() => repo.close());
afterEach(() => {
  repo.faults = {};
  repo.models = [
    {
      modelId: ID,
      files: [
        { filename: 'model.gguf', bytes: BIG },
        { filename: 'tokenizer/config.json', bytes: SMALL },
      ],
    },
  ];
  repo.fileHits.length = 0;
});
repo = undefined as unknown as SwanRepository;

function fresh(): string {
  repo.models = [
    {
      modelId: ID,
      files: [
        { filename: 'model.gguf', bytes: BIG },
        { filename: 'tokenizer/config.json', bytes: SMALL },
      ],
    },
  ];
  return tempHome('swan-dl-');
}

describe('the repository', () => {
  it('reads the catalogue and a file list wrapped in {data: …}, as the Go provider does', async () => {
    fresh();
    const c = await fetchCatalog(repo.url);
    expect(c.models).toEqual([{ modelId: ID, name: ID, category: 'text-generation', fileCount: 2, totalSizeBytes: BIG.length + SMALL.length }]);
    expect(repo.apiHits).toContain('/api/v1/models/catalog');
  });

  it('refuses a file list whose filename would leave the model folder, or whose hash is not sha256', () => {
    const list = (f: Record<string, unknown>) => ({
      data: { files: [{ filename: 'a', hash: '', algorithm: 'sha256', size_bytes: 1, url: 'http://x/a', ...f }] },
    });
    expect(() => parseModelFiles(list({ filename: '../../.bashrc' }), ID, 'http://x')).toThrow(expect.objectContaining({ code: 'unsafe_filename' }));
    expect(() => parseModelFiles(list({ algorithm: 'md5' }), ID, 'http://x')).toThrow(expect.objectContaining({ code: 'unsupported_algorithm' }));
    expect(() => parseModelFiles(list({ hash: 'zz' }), ID, 'http://x')).toThrow(expect.objectContaining({ code: 'repository_malformed' }));
    expect(() => parseModelFiles(list({ url: 'file:///etc/passwd' }), ID, 'http://x')).toThrow(expect.objectContaining({ code: 'repository_malformed' }));
    expect(() => parseModelFiles({ files: [] }, ID, 'http://x')).toThrow(RepositoryError);
    expect(safeRelativePath('tokenizer/config.json')).toBe('tokenizer/config.json');
    expect(safeRelativePath('/etc/passwd')).toBeUndefined();
  });

  it('says a model it does not have is not in the repository', async () => {
    const dir = fresh();
    await expect(downloadModel({ serviceUrl: repo.url, modelsDir: dir, modelId: 'nobody/none', freeBytes: plenty })).rejects.toMatchObject({
      code: 'model_not_in_repository',
    });
  });
});

describe('a download', () => {
  it('writes every file verified, then the Go-shaped manifest the fingerprint answer reads; progress has bytes, rate and time left', async () => {
    const dir = fresh();
    const seen: ModelProgress[] = [];
    const r = await downloadModel({ serviceUrl: repo.url, modelsDir: dir, modelId: ID, freeBytes: plenty, onProgress: (p) => seen.push(p) });
    expect(r.state).toBe('verified');
    expect(fs.readFileSync(path.join(dir, ID, 'model.gguf')).equals(BIG)).toBe(true);
    expect(fs.readFileSync(path.join(dir, ID, 'tokenizer', 'config.json')).equals(SMALL)).toBe(true);
    const m = readGoManifest(dir, ID);
    expect(m.ok).toBe(true);
    if (!m.ok) return;
    expect(m.manifest.files).toEqual([
      { filename: 'model.gguf', hash: sha256(BIG), size_bytes: BIG.length },
      { filename: 'tokenizer/config.json', hash: sha256(SMALL), size_bytes: SMALL.length },
    ]);
    expect(m.manifest.composite_hash).toBe(compositeHash(m.manifest.files));
    expect(seen[0]?.phase).toBe('listing');
    expect(seen.at(-1)).toMatchObject({ phase: 'verified', doneBytes: BIG.length + SMALL.length, totalBytes: BIG.length + SMALL.length });
    expect(fs.existsSync(path.join(dir, ID, LOCK_FILENAME))).toBe(false);
    expect(fs.readdirSync(path.join(dir, ID)).filter((f) => f.endsWith('.part'))).toEqual([]);
  });

  it('resumes with a Range request after the connection drops, and the hash of the whole file still matches', async () => {
    const dir = fresh();
    repo.faults = { dropAfterBytes: 1024 * 1024 };
    const r = await downloadModel({ serviceUrl: repo.url, modelsDir: dir, modelId: ID, freeBytes: plenty, retryDelayMs: 1 });
    expect(r.state).toBe('verified');
    const gguf = repo.fileHits.filter((h) => h.path.endsWith('model.gguf'));
    expect(gguf.length).toBe(2);
    expect(gguf[1]?.range).toMatch(/^bytes=\d+-$/);
    expect(gguf[1]?.range).toBe('bytes=1048576-');
    expect(fs.readFileSync(path.join(dir, ID, 'model.gguf')).equals(BIG)).toBe(true);
  });

  it('resumes a part left by a killed run from its end (only the rest is fetched)', async () => {
    const dir = fresh();
    fs.mkdirSync(path.join(dir, ID), { recursive: true });
    fs.writeFileSync(path.join(dir, ID, 'model.gguf.part'), BIG.subarray(0, 2_000_000));
    // The lock of a process that is gone is taken over.
    fs.writeFileSync(path.join(dir, ID, LOCK_FILENAME), '999999999');
    const r = await downloadModel({ serviceUrl: repo.url, modelsDir: dir, modelId: ID, freeBytes: plenty });
    expect(r.state).toBe('verified');
    expect(r.files[0]?.resumedBytes).toBe(2_000_000);
    expect(repo.fileHits.find((h) => h.path.endsWith('model.gguf'))?.range).toBe('bytes=2000000-');
  });

  it('starts over when the server ignores the Range', async () => {
    const dir = fresh();
    fs.mkdirSync(path.join(dir, ID), { recursive: true });
    fs.writeFileSync(path.join(dir, ID, 'model.gguf.part'), Buffer.alloc(1000, 1)); // not even the right bytes
    repo.faults = { ignoreRange: true };
    const r = await downloadModel({ serviceUrl: repo.url, modelsDir: dir, modelId: ID, freeBytes: plenty });
    expect(r.state).toBe('verified');
    expect(fs.readFileSync(path.join(dir, ID, 'model.gguf')).equals(BIG)).toBe(true);
  });

  it('refuses a file whose bytes do not match: no file, no part, no manifest', async () => {
    const dir = fresh();
    repo.faults = { corrupt: true };
    const err = await downloadModel({ serviceUrl: repo.url, modelsDir: dir, modelId: ID, freeBytes: plenty }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DownloadError);
    expect((err as DownloadError).code).toBe('hash_mismatch');
    const files = fs.readdirSync(path.join(dir, ID));
    expect(files).not.toContain('model.gguf');
    expect(files).not.toContain('model.gguf.part');
    expect(files).not.toContain(MANIFEST_FILENAME);
    expect(readGoManifest(dir, ID)).toEqual({ ok: false, absent: true });
  });

  it('a manifest of an earlier download is removed before the files change', async () => {
    const dir = fresh();
    await downloadModel({ serviceUrl: repo.url, modelsDir: dir, modelId: ID, freeBytes: plenty });
    fs.rmSync(path.join(dir, ID, 'model.gguf'));
    repo.faults = { corrupt: true };
    await expect(downloadModel({ serviceUrl: repo.url, modelsDir: dir, modelId: ID, freeBytes: plenty })).rejects.toMatchObject({ code: 'hash_mismatch' });
    expect(readGoManifest(dir, ID)).toEqual({ ok: false, absent: true });
  });

  it('checks the disk first: too little free space fetches nothing', async () => {
    const dir = fresh();
    await expect(downloadModel({ serviceUrl: repo.url, modelsDir: dir, modelId: ID, freeBytes: async () => 10 * 1024 * 1024 })).rejects.toMatchObject({
      code: 'no_disk_space',
    });
    expect(repo.fileHits).toEqual([]);
  });

  it('a file already there and matching is kept, not fetched again', async () => {
    const dir = fresh();
    await downloadModel({ serviceUrl: repo.url, modelsDir: dir, modelId: ID, freeBytes: plenty });
    repo.fileHits.length = 0;
    const r = await downloadModel({ serviceUrl: repo.url, modelsDir: dir, modelId: ID, freeBytes: plenty });
    expect(r.files.every((f) => f.skipped)).toBe(true);
    expect(repo.fileHits).toEqual([]);
    expect(readGoManifest(dir, ID).ok).toBe(true);
  });

  it('is cancelled by its signal, keeps the part for a resume, and writes no manifest', async () => {
    const dir = fresh();
    repo.faults = { hold: true };
    const ctl = new AbortController();
    const started = new Promise<void>((resolve) => {
      void downloadModel({
        serviceUrl: repo.url,
        modelsDir: dir,
        modelId: ID,
        freeBytes: plenty,
        signal: ctl.signal,
        onProgress: (p) => p.phase === 'downloading' && resolve(),
      }).catch((e: unknown) => void (cancelled = e));
    });
    let cancelled: unknown;
    await started;
    ctl.abort();
    await expect.poll(() => cancelled, { timeout: 10_000 }).toBeInstanceOf(DownloadError);
    expect((cancelled as DownloadError).code).toBe('cancelled');
    expect(fs.existsSync(path.join(dir, ID, 'model.gguf.part'))).toBe(true);
    expect(readGoManifest(dir, ID)).toEqual({ ok: false, absent: true });
    repo.release();
  });

  it("the weights service reads the downloaded model's manifest: a fingerprint challenge finds each file's hash", async () => {
    const dir = fresh();
    await downloadModel({ serviceUrl: repo.url, modelsDir: dir, modelId: ID, freeBytes: plenty });
    const w = new Weights({ dir: path.join(dir, 'weights-cache'), modelsDir: dir, log: memoryLog().child('w') });
    w.sync([{ model: ID }]);
    expect(w.status(ID)?.state).toBe('verified');
    expect(w.lookup(ID, 'model.gguf')).toEqual({ state: 'known', hash: sha256(BIG) });
    expect(w.lookup(ID, 'tokenizer/config.json')).toEqual({ state: 'known', hash: sha256(SMALL) });
    expect(w.lookup(ID, 'other.bin')).toEqual({ state: 'absent' });
  });
});
