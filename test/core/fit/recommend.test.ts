// What this GPU should serve: the repository's catalogue joined with every field of the network's demand,
// the fit estimated from the models' own files (a GGUF header read by byte ranges, config.json + a
// safetensors index), unknown kept apart with its reason, the rows sorted by what they would earn here.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GIB } from '../../../src/core/fit/estimate';
import { parseDemand } from '../../../src/core/fit/market';
import { planContext, recommend } from '../../../src/core/fit/recommend';
import { downloadModel } from '../../../src/core/downloads/model-download';
import { tempHome } from '../../support/stack';
import { bytesOf, SwanRepository } from '../../support/swan-repository';
import { repoRoot } from '../../support/traces';

const SMALL_GGUF = path.resolve(repoRoot, '..', 'shared', 'engines', 'llama.cpp', 'models', 'small.gguf');
const HAVE = fs.existsSync(SMALL_GGUF);

const LLAMA_8B_CONFIG = {
  hidden_size: 4096,
  intermediate_size: 14336,
  max_position_embeddings: 131072,
  num_attention_heads: 32,
  num_hidden_layers: 32,
  num_key_value_heads: 8,
  tie_word_embeddings: false,
  torch_dtype: 'bfloat16',
  vocab_size: 128256,
};

/** A demand entry with every field the Go DemandEntry reads. */
function demandOf(id: string, entrant: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    model_id: id,
    model_name: id.split('/')[1],
    category: 'text-generation',
    tier: 'standard',
    input_price: 0.2,
    output_price: 0.6,
    provider_input_price: 0.18,
    provider_output_price: 0.54,
    online_providers: 3,
    requests_24h: 1200,
    tokens_24h: 3_400_000,
    revenue_24h: 2.4,
    avg_latency_ms: 850,
    demand_trend: 'rising',
    demand_change_pct: 12.5,
    min_vram_gb: 0,
    vram_known: false,
    est_daily_earnings: 0.8,
    est_entrant_daily_earnings: entrant,
    entrant_basis: 'share of 24h revenue',
    plan_covered: true,
    subscription_share: 0.3,
    long_context_share: 0.05,
    context_length: 4096,
    prompt_tokens_p50: 300,
    prompt_tokens_p95: 1800,
    prompt_tokens_max: 3900,
    total_tokens_p95: 2300,
    ...extra,
  };
}

let repo: SwanRepository;
beforeAll(async () => {
  repo = await SwanRepository.start();
  repo.models = [
    ...(HAVE ? [{ modelId: 'swan-test/Small-GGUF', files: [{ filename: 'small.gguf', bytes: fs.readFileSync(SMALL_GGUF) }] }] : []),
    {
      modelId: 'meta-llama/Llama-3.1-8B-Instruct',
      files: [
        { filename: 'config.json', bytes: Buffer.from(JSON.stringify(LLAMA_8B_CONFIG)) },
        { filename: 'model.safetensors.index.json', bytes: Buffer.from(JSON.stringify({ metadata: { total_size: 16_060_522_496 }, weight_map: {} })) },
        { filename: 'model-00001-of-00001.safetensors', bytes: bytesOf(4096, 3) },
      ],
    },
    { modelId: 'x/Mystery', files: [{ filename: 'weights.bin', bytes: bytesOf(1000, 5) }] },
  ];
  repo.demand = [
    // The GGUF case needs a real header (../shared's small.gguf); without it the model is left out of both tables.
    ...(HAVE ? [demandOf('swan-test/Small-GGUF', 0.9)] : []),
    demandOf('meta-llama/Llama-3.1-8B-Instruct', 2.5, { context_length: 8192 }),
    demandOf('x/Mystery', 1.5),
    demandOf('y/Only-In-Demand', 3.0, { min_vram_gb: 16, vram_known: true }),
  ];
});
afterAll(() => repo.close());

describe('the demand table', () => {
  it('reads every field the Go DemandEntry has; a bad field drops only itself', () => {
    const { entries } = parseDemand({ code: 0, data: { models: [demandOf('a/b', 1, { avg_latency_ms: 'slow' }), { nope: 1 }] } });
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      modelId: 'a/b',
      modelName: 'b',
      onlineProviders: 3,
      requests24h: 1200,
      tokens24h: 3_400_000,
      revenue24h: 2.4,
      demandTrend: 'rising',
      demandChangePct: 12.5,
      minVramGb: 0,
      vramKnown: false,
      estDailyEarnings: 0.8,
      estEntrantDailyEarnings: 1,
      entrantBasis: 'share of 24h revenue',
      planCovered: true,
      contextLength: 4096,
      promptTokensP50: 300,
      promptTokensP95: 1800,
      promptTokensMax: 3900,
      totalTokensP95: 2300,
      providerOutputPrice: 0.54,
    });
    expect(entries[0]!.avgLatencyMs).toBeUndefined();
  });

  it("plans the context from the network's context_length, else room for its largest prompts", () => {
    expect(planContext({ modelId: 'a', vramKnown: false, contextLength: 4096 })).toBe(4096);
    expect(planContext({ modelId: 'a', vramKnown: false, totalTokensP95: 10_000 })).toBe(13_312);
    expect(planContext({ modelId: 'a', vramKnown: false }, 2048)).toBe(2048);
    expect(planContext(undefined)).toBe(8192);
  });
});

describe('the recommendation', () => {
  it('on a 12 GiB GPU: fits first by earnings, then unknown with its reason, then too large (earning nothing here)', async () => {
    const { rows } = await recommend({ serviceUrl: repo.url, modelsDir: tempHome('swan-rec-'), budgetBytes: 12 * GIB });
    const byId = Object.fromEntries(rows.map((r) => [r.modelId, r]));
    expect(rows.map((r) => r.fit.fit)).toEqual([...(HAVE ? ['fits'] : []), 'unknown', 'too_large', 'too_large']);
    if (HAVE) {
      const s = byId['swan-test/Small-GGUF']!;
      expect(s.estimate).toMatchObject({ known: true, exact: true, weightsFrom: 'gguf', contextLength: 512 });
      expect(s.earnHereDaily).toBe(0.9);
      // Only the header was read, by ranges: never the whole file.
      expect(repo.fileHits.filter((h) => h.path.endsWith('small.gguf')).every((h) => h.range !== undefined)).toBe(true);
    }
    const llama = byId['meta-llama/Llama-3.1-8B-Instruct']!;
    expect(llama.estimate).toMatchObject({ known: true, exact: false, weightsFrom: 'safetensors_index', contextLength: 8192, kvBytes: GIB });
    expect(llama.fit).toMatchObject({ fit: 'too_large', basis: 'estimate' });
    expect(llama.earnHereDaily).toBe(0);
    const mystery = byId['x/Mystery']!;
    expect(mystery.fit).toMatchObject({ fit: 'unknown', code: 'no_weights_figure' });
    expect(mystery.fit.reason).toMatch(/config\.json/);
    const only = byId['y/Only-In-Demand']!;
    expect(only).toMatchObject({ inRepository: false, fit: { fit: 'too_large', basis: 'network' } });
    expect(only.demand?.requests24h).toBe(1200);
  });

  it('on a 24 GiB GPU the 8B model fits, and the best earner leads', async () => {
    const { rows } = await recommend({ serviceUrl: repo.url, modelsDir: tempHome('swan-rec-'), budgetBytes: 24 * GIB });
    expect(rows[0]).toMatchObject({ modelId: 'y/Only-In-Demand', fit: { fit: 'fits', basis: 'network' }, earnHereDaily: 3 });
    expect(rows[1]).toMatchObject({ modelId: 'meta-llama/Llama-3.1-8B-Instruct', fit: { fit: 'fits' }, earnHereDaily: 2.5 });
  });

  it('without a GPU figure every fit is unknown (no_gpu_memory) and says so; none counts as fits', async () => {
    const { rows, notes } = await recommend({ serviceUrl: repo.url, modelsDir: tempHome('swan-rec-'), budgetBytes: undefined });
    expect(rows.every((r) => r.fit.fit === 'unknown' && r.fit.code === 'no_gpu_memory')).toBe(true);
    expect(notes.join(' ')).toMatch(/--vram-gb/);
  });

  it.skipIf(!HAVE)('a model already downloaded is marked verified and estimated from its file on disk', async () => {
    const dir = tempHome('swan-rec-');
    await downloadModel({ serviceUrl: repo.url, modelsDir: dir, modelId: 'swan-test/Small-GGUF', freeBytes: async () => 1e15 });
    repo.fileHits.length = 0;
    const { rows } = await recommend({ serviceUrl: repo.url, modelsDir: dir, budgetBytes: 12 * GIB });
    expect(rows.find((r) => r.modelId === 'swan-test/Small-GGUF')).toMatchObject({ onDisk: 'verified', fit: { fit: 'fits' }, estimate: { exact: true } });
    expect(repo.fileHits.filter((h) => h.path.endsWith('small.gguf'))).toEqual([]);
  });
});
