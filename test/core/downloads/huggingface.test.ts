// GGUF files from the Hugging Face Hub (a stand-in of its API written from its documentation) through
// @huggingface/hub's listFiles and the same verified download: the sha256 from the LFS entry, the paged
// tree followed, the resolve redirect followed, a file kept in git only hashed here ("hashed").
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { huggingFaceFiles } from '../../../src/core/downloads/huggingface';
import { downloadModel } from '../../../src/core/downloads/model-download';
import { readGoManifest } from '../../../src/core/weights/manifest';
import { HfHub } from '../../support/hf-hub';
import { tempHome } from '../../support/stack';
import { bytesOf, sha256 } from '../../support/swan-repository';

const REPO = 'someone/Tiny-GGUF';
const Q4 = bytesOf(2 * 1024 * 1024 + 5, 21);
const Q8 = bytesOf(3 * 1024 * 1024 + 1, 22);
const README = Buffer.from('# a tiny model\n');

let hub: HfHub;
beforeAll(async () => {
  hub = await HfHub.start();
  hub.repos[REPO] = [
    { path: 'README.md', bytes: README, lfs: false },
    { path: 'tiny-Q4_K_M.gguf', bytes: Q4, lfs: true },
    { path: 'tiny-Q8_0.gguf', bytes: Q8, lfs: true },
  ];
});
afterAll(() => hub.close());

describe('Hugging Face downloads', () => {
  it('list the repository through every page, with the LFS sha256 and a resolve URL per file', async () => {
    const list = await huggingFaceFiles({ repo: REPO, hubUrl: hub.url });
    expect(list.files.map((f) => [f.filename, f.hash, f.sizeBytes])).toEqual([
      ['README.md', '', README.length],
      ['tiny-Q4_K_M.gguf', sha256(Q4), Q4.length],
      ['tiny-Q8_0.gguf', sha256(Q8), Q8.length],
    ]);
    expect(hub.hits.filter((h) => h.startsWith(`/api/models/${REPO}/tree/main`))).toHaveLength(2);
  });

  it("fetch one GGUF by pattern, verified against the Hub's sha256, into the models folder with its manifest", async () => {
    const dir = tempHome('swan-hf-');
    const files = await huggingFaceFiles({ repo: REPO, hubUrl: hub.url, include: ['*Q4_K_M.gguf'] });
    const r = await downloadModel({ serviceUrl: 'http://127.0.0.1:9', modelsDir: dir, modelId: 'swan/Tiny-Model', files, freeBytes: async () => 1e15 });
    expect(r.state).toBe('verified');
    expect(fs.readFileSync(path.join(dir, 'swan/Tiny-Model', 'tiny-Q4_K_M.gguf')).equals(Q4)).toBe(true);
    const m = readGoManifest(dir, 'swan/Tiny-Model');
    expect(m.ok && m.manifest.files).toEqual([{ filename: 'tiny-Q4_K_M.gguf', hash: sha256(Q4), size_bytes: Q4.length }]);
    expect(hub.hits.some((h) => h.startsWith(`/${REPO}/resolve/main/tiny-Q4_K_M.gguf`))).toBe(true);
  });

  it('a file kept in git (no LFS sha256) is only hashed here: the download says "hashed", not "verified"', async () => {
    const dir = tempHome('swan-hf-');
    const files = await huggingFaceFiles({ repo: REPO, hubUrl: hub.url, include: ['README.md'] });
    const r = await downloadModel({ serviceUrl: 'http://127.0.0.1:9', modelsDir: dir, modelId: REPO, files, freeBytes: async () => 1e15 });
    expect(r.state).toBe('hashed');
  });

  it('a repository the Hub does not have, or a name that is not a repo id, is refused with its code', async () => {
    await expect(huggingFaceFiles({ repo: 'nobody/none', hubUrl: hub.url })).rejects.toMatchObject({ code: 'hf_not_a_repo' });
    await expect(huggingFaceFiles({ repo: '../etc', hubUrl: hub.url })).rejects.toMatchObject({ code: 'hf_not_a_repo' });
    await expect(huggingFaceFiles({ repo: REPO, hubUrl: hub.url, include: ['*.safetensors'] })).rejects.toMatchObject({ code: 'hf_no_such_file' });
  });
});
