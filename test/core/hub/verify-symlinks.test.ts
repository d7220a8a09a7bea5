// verify `fingerprint` hashes only files that really are inside the model folder: a symlink (to a file
// or a folder) pointing elsewhere is refused, so the hub cannot use the provider as a content oracle
// for arbitrary files. Hugging Face cache snapshots (links into the repo's own blobs/) still work.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handleVerify, type FingerprintResponse } from '../../../src/core/hub/verify';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
let root: string;

beforeAll(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-verify-links-'));
  fs.writeFileSync(path.join(root, 'secret.txt'), 'the owner private file');
  fs.mkdirSync(path.join(root, 'elsewhere'));
  fs.writeFileSync(path.join(root, 'elsewhere', 'id_rsa'), 'PRIVATE KEY');
  const dir = path.join(root, 'plain');
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, 'config.json'), '{}');
  fs.symlinkSync(path.join(root, 'secret.txt'), path.join(dir, 'weights.bin'));
  fs.symlinkSync(path.join(root, 'elsewhere'), path.join(dir, 'sub'));
  fs.symlinkSync('config.json', path.join(dir, 'alias.json')); // inside: fine
  // A Hugging Face cache repo: snapshots/<rev>/file -> ../../blobs/<sha>
  const repo = path.join(root, 'hub', 'models--org--model');
  fs.mkdirSync(path.join(repo, 'blobs'), { recursive: true });
  fs.mkdirSync(path.join(repo, 'snapshots', 'abc123'), { recursive: true });
  fs.writeFileSync(path.join(repo, 'blobs', 'b1'), 'weights');
  fs.symlinkSync('../../blobs/b1', path.join(repo, 'snapshots', 'abc123', 'model.safetensors'));
  fs.symlinkSync(path.join(root, 'secret.txt'), path.join(repo, 'snapshots', 'abc123', 'leak.txt'));
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

async function fingerprint(dir: string, files: Array<{ filename: string; expected_hash: string }>) {
  return handleVerify(
    { challenge_id: 'c', challenge_type: 'fingerprint', model_id: 'm', challenge: { files } },
    { resolve: () => ({ endpoint: { url: 'http://127.0.0.1:9' }, modelDir: dir }), complete: () => Promise.reject(new Error('unused')) },
  );
}

describe.skipIf(process.platform === 'win32')('fingerprint and symlinks', () => {
  it('a link to a file outside the model folder is refused, not hashed', async () => {
    const r = await fingerprint(path.join(root, 'plain'), [{ filename: 'weights.bin', expected_hash: sha('the owner private file') }]);
    expect(r.success).toBe(false);
    expect((r.response as FingerprintResponse).files).toEqual([{ filename: 'weights.bin', hash: '', status: 'missing' }]);
    expect(r.error_code).toBe('path_outside_model');
  });

  it('a linked folder pointing outside is refused too', async () => {
    const r = await fingerprint(path.join(root, 'plain'), [{ filename: 'sub/id_rsa', expected_hash: sha('PRIVATE KEY') }]);
    expect((r.response as FingerprintResponse).files[0]).toMatchObject({ hash: '', status: 'missing' });
    expect(r.error_code).toBe('path_outside_model');
  });

  it('links that stay inside, and Hugging Face snapshot links into the repo blobs, are hashed', async () => {
    const inside = await fingerprint(path.join(root, 'plain'), [{ filename: 'alias.json', expected_hash: sha('{}') }]);
    expect(inside.success).toBe(true);
    const snap = path.join(root, 'hub', 'models--org--model', 'snapshots', 'abc123');
    const hf = await fingerprint(snap, [{ filename: 'model.safetensors', expected_hash: sha('weights') }]);
    expect(hf.success).toBe(true);
    const leak = await fingerprint(snap, [{ filename: 'leak.txt', expected_hash: sha('the owner private file') }]);
    expect((leak.response as FingerprintResponse).files[0]).toMatchObject({ hash: '', status: 'missing' });
  });
});
