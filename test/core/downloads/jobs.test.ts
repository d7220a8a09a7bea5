// The console's downloads (the running agent's): progress seen while the bytes arrive, cancel keeps what
// arrived and the next start resumes it with a Range request, the end says verified only when every hash
// matched, a mismatch is a failure with its code, and the weights a serve would use are named.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryLog } from '../../../src/core/base/log';
import { ModelDownloads } from '../../../src/core/downloads/jobs';
import { downloadedWeights } from '../../../src/core/downloads/models-dir';
import { tempHome } from '../../support/stack';
import { bytesOf, SwanRepository } from '../../support/swan-repository';

const ID = 'swan-test/Jobs-Model';
const GGUF = Buffer.concat([Buffer.from('GGUF'), bytesOf(2 * 1024 * 1024, 3)]);

let repo: SwanRepository;
beforeAll(async () => {
  repo = await SwanRepository.start();
});
afterAll(() => repo.close());

function downloads(): { jobs: ModelDownloads; dir: string; changes: () => number } {
  const dir = tempHome('swan-jobs-');
  let n = 0;
  return { jobs: new ModelDownloads({ modelsDir: dir, log: memoryLog().child('downloads'), changed: () => n++ }), dir, changes: () => n };
}

describe('the console downloads', () => {
  it('shows progress, cancels keeping what arrived, resumes with Range, and ends verified with the GGUF to serve', async () => {
    repo.models = [
      {
        modelId: ID,
        files: [
          { filename: 'model.Q4.gguf', bytes: GGUF },
          { filename: 'small.gguf', bytes: Buffer.from('GGUF-small') },
        ],
      },
    ];
    repo.faults = { hold: true };
    repo.fileHits.length = 0;
    const { jobs, dir, changes } = downloads();
    jobs.start(ID, repo.url);
    await expect.poll(() => jobs.list()[0]?.phase).toBe('downloading');
    await expect.poll(() => jobs.list()[0]?.doneBytes ?? 0).toBeGreaterThan(0);
    const running = jobs.list()[0]!;
    expect(running.totalBytes).toBe(GGUF.length + 10);
    expect(running.finishedAt).toBeUndefined();
    // A second start joins the running one.
    jobs.start(ID, repo.url);
    expect(jobs.list()).toHaveLength(1);

    expect(jobs.cancel(ID)).toBe(true);
    repo.release();
    await jobs.settled(ID);
    expect(jobs.list()[0]).toMatchObject({ phase: 'cancelled', code: 'cancelled' });
    expect(jobs.cancel(ID)).toBe(false);
    expect(downloadedWeights(dir, ID, 'llamacpp')).toBeUndefined();

    repo.faults = {};
    jobs.start(ID, repo.url);
    await jobs.settled(ID);
    const done = jobs.list()[0]!;
    expect(done).toMatchObject({ phase: 'verified', doneBytes: GGUF.length + 10, fileCount: 2 });
    expect(done.compositeHash).toMatch(/^[0-9a-f]{64}$/);
    // The resume asked for the rest only.
    expect(repo.fileHits.some((h) => h.path.endsWith('model.Q4.gguf') && /^bytes=[1-9]\d*-$/.test(h.range ?? ''))).toBe(true);
    // The largest GGUF is what llama.cpp serves; a folder without config.json is nothing vLLM can serve.
    expect(done.weights).toBe(path.join(dir, ID, 'model.Q4.gguf'));
    expect(downloadedWeights(dir, ID, 'vllm')).toBeUndefined();
    expect(changes()).toBeGreaterThan(2);
  });

  it('a file whose bytes do not match its hash: failed with hash_mismatch, no manifest, nothing to serve', async () => {
    repo.models = [{ modelId: ID, files: [{ filename: 'model.gguf', bytes: GGUF }] }];
    repo.faults = { corrupt: true };
    const { jobs, dir } = downloads();
    jobs.start(ID, repo.url);
    await jobs.settled(ID);
    expect(jobs.list()[0]).toMatchObject({ phase: 'failed', code: 'hash_mismatch' });
    expect(fs.existsSync(path.join(dir, ID, '.swan-hash-manifest.json'))).toBe(false);
    repo.faults = {};
  });

  it('a model id that would leave the models folder is refused, and stop() cancels what runs', async () => {
    const { jobs } = downloads();
    jobs.start('../../etc', repo.url);
    await jobs.settled('../../etc');
    expect(jobs.list()[0]).toMatchObject({ phase: 'failed', code: 'unsafe_filename' });

    repo.models = [{ modelId: ID, files: [{ filename: 'model.gguf', bytes: GGUF }] }];
    repo.faults = { hold: true };
    jobs.start(ID, repo.url);
    await expect.poll(() => jobs.list().find((j) => j.modelId === ID)?.phase).toBe('downloading');
    const stopped = jobs.stop();
    repo.release();
    await stopped;
    expect(jobs.list().find((j) => j.modelId === ID)).toMatchObject({ phase: 'cancelled' });
    repo.faults = {};
  });
});
