// `swan-provider models catalog|recommend|download` run as users run them (child processes of the built
// command) against a stand-in of the Swan model repository: JSON with the field `fit`, a verified download
// with its manifest, a mismatch refused with its code, and a download killed mid-file that resumes where
// it stopped.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { progressLine } from '../../src/cli/models-fetch-command';
import { readGoManifest } from '../../src/core/weights/manifest';
import { CliProcess, offlineHome, runCli } from '../support/cli/cli';
import { tempHome, until } from '../support/stack';
import { bytesOf, sha256, SwanRepository } from '../support/swan-repository';

const ID = 'swan-test/Cli-Model';
const BIG = bytesOf(8 * 1024 * 1024 + 3, 11);
const CONFIG = {
  hidden_size: 512,
  intermediate_size: 1024,
  num_attention_heads: 8,
  num_hidden_layers: 4,
  num_key_value_heads: 8,
  vocab_size: 1000,
  torch_dtype: 'float16',
  max_position_embeddings: 4096,
};

let repo: SwanRepository;
beforeAll(async () => {
  repo = await SwanRepository.start();
  repo.models = [
    {
      modelId: ID,
      name: 'CLI model',
      files: [
        { filename: 'config.json', bytes: Buffer.from(JSON.stringify(CONFIG)) },
        { filename: 'model.safetensors', bytes: BIG },
      ],
    },
  ];
  repo.demand = [
    {
      model_id: ID,
      est_entrant_daily_earnings: 1.25,
      requests_24h: 40,
      demand_trend: 'stable',
      online_providers: 2,
      vram_known: false,
      min_vram_gb: 0,
      context_length: 2048,
    },
  ];
});
afterAll(() => repo.close());

const home = () => offlineHome(tempHome('swan-cli-models-'));
/** Upper bounds only (a loaded machine runs a child slowly); nothing waits them out. */
const LIMIT = 90_000;
const TEST_LIMIT = 240_000;

describe('swan-provider models', () => {
  it(
    "catalog --json lists the repository's models and whether each is on disk",
    async () => {
      const r = await runCli(['models', 'catalog', '--json', '--home', home(), '--service-url', repo.url], {}, LIMIT);
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual([
        {
          model_id: ID,
          name: 'CLI model',
          category: 'text-generation',
          file_count: 2,
          total_size_bytes: BIG.length + Buffer.byteLength(JSON.stringify(CONFIG)),
          on_disk: 'none',
        },
      ]);
    },
    TEST_LIMIT,
  );

  it(
    'recommend --json gives each model its fit, the estimate, the earnings here and the demand',
    async () => {
      const r = await runCli(['models', 'recommend', '--json', '--vram-gb', '8', '--home', home(), '--service-url', repo.url], {}, LIMIT);
      expect(r.code).toBe(0);
      const j = JSON.parse(r.stdout) as { models: Array<Record<string, unknown>> };
      expect(j.models[0]).toMatchObject({
        model_id: ID,
        fit: 'fits',
        fit_basis: 'estimate',
        earn_here_daily_usd: 1.25,
        on_disk: 'none',
        plan: { context_length: 2048, slots: 1 },
        estimate: { weights_from: 'config', exact: false },
      });
      expect((j.models[0]!.demand as Record<string, unknown>).requests24h).toBe(40);
    },
    TEST_LIMIT,
  );

  it(
    'download verifies every file and writes the manifest; a second download fetches nothing',
    async () => {
      const h = home();
      const r = await runCli(['models', 'download', ID, '--json', '--home', h, '--service-url', repo.url], {}, LIMIT);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ model_id: ID, state: 'verified' });
      const m = readGoManifest(path.join(h, 'models'), ID);
      expect(m.ok && m.manifest.files.find((f) => f.filename === 'model.safetensors')?.hash).toBe(sha256(BIG));
      const again = await runCli(['models', 'download', ID, '--json', '--home', h, '--service-url', repo.url], {}, LIMIT);
      expect(JSON.parse(again.stdout).files.every((f: { skipped: boolean }) => f.skipped)).toBe(true);
    },
    TEST_LIMIT,
  );

  it(
    'a file whose bytes do not match is refused: exit 1, the code on stderr, no manifest',
    async () => {
      const h = home();
      repo.faults = { corrupt: true };
      try {
        const r = await runCli(['models', 'download', ID, '--home', h, '--service-url', repo.url], {}, LIMIT);
        expect(r.code).toBe(1);
        expect(r.stderr).toMatch(/error \[hash_mismatch\]/);
        expect(fs.existsSync(path.join(h, 'models', ID, '.swan-hash-manifest.json'))).toBe(false);
      } finally {
        repo.faults = {};
      }
    },
    TEST_LIMIT,
  );

  it(
    'a download killed mid-file resumes from what it had, with a Range request',
    async () => {
      const h = home();
      repo.faults = { hold: true };
      repo.fileHits.length = 0;
      const part = path.join(h, 'models', ID, 'model.safetensors.part');
      const first = CliProcess.start(['models', 'download', ID, '--home', h, '--service-url', repo.url]);
      await until(() => fs.existsSync(part) && fs.statSync(part).size > 0, 'the first bytes on disk', LIMIT);
      first.child.kill('SIGKILL');
      await first.exited;
      repo.release();
      repo.faults = {};
      const kept = fs.statSync(part).size;
      expect(kept).toBeGreaterThan(0);
      expect(kept).toBeLessThan(BIG.length);
      const r = await runCli(['models', 'download', ID, '--json', '--home', h, '--service-url', repo.url], {}, LIMIT);
      expect(r.code, r.stderr).toBe(0);
      const out = JSON.parse(r.stdout) as { state: string; files: Array<{ filename: string; resumed_bytes: number }> };
      expect(out.state).toBe('verified');
      expect(out.files.find((f) => f.filename === 'model.safetensors')?.resumed_bytes).toBe(kept);
      expect(repo.fileHits.filter((x) => x.path.endsWith('model.safetensors')).at(-1)?.range).toBe(`bytes=${kept}-`);
    },
    TEST_LIMIT,
  );

  it('progress says bytes, percent, rate and time left', () => {
    expect(
      progressLine({
        modelId: ID,
        phase: 'downloading',
        file: 'model.safetensors',
        fileIndex: 1,
        fileCount: 2,
        doneBytes: 2.5e9,
        totalBytes: 5e9,
        rateBytesPerSec: 50e6,
        etaSeconds: 50,
      }),
    ).toBe('model.safetensors [2/2]  2.5 GB / 5.0 GB  50%  50.0 MB/s  0:50 left');
  });
});
