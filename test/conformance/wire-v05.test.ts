// The smaller wire details of the newest Go provider (../shared/HUB-PROTOCOL.md "heartbeat", "register",
// "More from the newest Go files"; inference_client.go, gpu_vram_test.go): vram_gb is 0 when unknown and
// the system's memory on a unified-memory board, never a 1 GB guess the hub refuses; heartbeats carry a fresh
// envelope request_id, provider_id and a light model_hashes list; model_health_update (fresh id, provider_id)
// follows the first successful ack; supported_parameters include logprobs; a rerank category; an unknown
// challenge_type gets a verify reply with success false. The agent runs as users run it, against the Go-hub
// stand-in, with a stand-in nvidia-smi of a GB10-like board whose memory.total reads [N/A].
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hardwareBlock, vramGb } from '../../src/core/gpu/hardware';
import { mapSiControllers } from '../../src/core/gpu/si-map';
import { makeFakeBin, fixture, writeFakeNvidiaSmi, type FakeBin } from '../support/gpu/fake-tools';
import { startTestEngine, type TestEngine } from '../support/engine-server';
import { startGoHub, type GoHub } from '../support/conformance/go-hub';
import { spawnAgent, type RunningAgent } from '../support/conformance/cli-agent';
import type { GpuInventory } from '../../src/shared/types';

const KEY = 'sk-prov-wire-v05-000000000';
const QWEN = 'Qwen2.5-1.5B-Instruct';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('vram_gb (parseNvidiaVRAMGB, gpu_vram_test.go)', () => {
  const inv = (vramTotalMb: number, vendor: 'nvidia' | 'apple' = 'nvidia'): GpuInventory =>
    ({ gpus: [{ index: 0, vendor, model: vendor === 'apple' ? 'Apple M2 Max' : 'NVIDIA GB10', slug: 'x', vramTotalMb }] }) as unknown as GpuInventory;
  it('floors a real reading, a reading under 1 GiB is 1, and an unknown one is 0, never 1', () => {
    expect(vramGb(10240)).toBe(10);
    expect(vramGb(512)).toBe(1);
    expect(vramGb(0)).toBe(0);
    expect(hardwareBlock(inv(0), 'unknown')?.vram_gb).toBe(0);
  });
  it('a Mac-like GPU reports the unified memory; with that unreadable (0) it reports 0', () => {
    const mac = mapSiControllers([{ vendor: 'Apple', model: 'M2 Max', vram: 0 }], 65536).gpus[0]!;
    expect(hardwareBlock({ gpus: [mac] } as unknown as GpuInventory, 'llamacpp')).toMatchObject({ gpu_type: 'm2_max', vram_gb: 64 });
    const unread = mapSiControllers([{ vendor: 'Apple', model: 'M2 Max', vram: 0 }], 0).gpus[0]!;
    expect(hardwareBlock({ gpus: [unread] } as unknown as GpuInventory, 'llamacpp')?.vram_gb).toBe(0);
  });
});

describe('the agent on the wire', () => {
  let bin: FakeBin;
  let boardDir: string;
  let hub: GoHub;
  let engine: TestEngine;
  let agent: RunningAgent;

  beforeAll(async () => {
    // A GB10-like board: the RTX 3080 capture with memory.total "[N/A]" (unified memory).
    boardDir = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-gb10-'));
    for (const f of fs.readdirSync(fixture('nvidia/rtx3080'))) fs.copyFileSync(path.join(fixture('nvidia/rtx3080'), f), path.join(boardDir, f));
    fs.writeFileSync(
      path.join(boardDir, 'query-gpu.csv'),
      '0, NVIDIA GB10, GPU-00000000-0000-0000-0000-000000000000, 0000000F:01:00.0, [N/A], 580.95.05, 12.1, [N/A]\n',
    );
    bin = makeFakeBin();
    writeFakeNvidiaSmi(bin, boardDir);
    engine = await startTestEngine({ engineType: 'vllm', chatTrace: 'vllm-chat-basic.sse' });
    hub = await startGoHub({ token: KEY });
    agent = spawnAgent({
      hub,
      key: KEY,
      bin,
      agent: { HeartbeatIntervalSeconds: 0.5 },
      models: { [QWEN]: { endpoint: engine.url }, 'my-reranker': { endpoint: engine.url, local_model: QWEN, category: 'rerank' } },
    });
    await hub.waitFor((f) => f.type === 'heartbeat', 'the first heartbeat', 30_000);
  }, 60_000);

  afterAll(async () => {
    await agent?.stop();
    await hub?.close();
    await engine?.close();
    bin?.cleanup();
    if (boardDir) fs.rmSync(boardDir, { recursive: true, force: true });
  });

  it('register: vram_gb is the system memory on a board whose nvidia-smi prints [N/A], not 1', async () => {
    const reg = await hub.waitFor((f) => f.type === 'register', 'register', 10_000);
    const hw = reg.payload.hardware as Record<string, unknown>;
    expect(hw.vram_gb).toBe(Math.floor(Math.round(os.totalmem() / 1048576) / 1024));
    expect(hw.vram_gb).toBeGreaterThan(1);
  });

  it('declarations: chat output lists logprobs among supported_parameters; a rerank model declares rerank output', async () => {
    const reg = await hub.waitFor((f) => f.type === 'register', 'register', 10_000);
    const decl = Object.fromEntries((reg.payload.model_declarations as Array<Record<string, unknown>>).map((d) => [d.model_id, d]));
    const out = (decl[QWEN]!.output_modalities as Array<{ supported_parameters?: string[] }>)[0]!;
    expect(out.supported_parameters).toContain('logprobs');
    expect(decl['my-reranker']!.output_modalities).toEqual([{ type: 'rerank' }]);
  });

  it('model_health_update follows the first successful ack, with a fresh request_id and provider_id', async () => {
    const reg = hub.frames.findIndex((f) => f.type === 'register');
    const after = hub.frames.slice(reg + 1);
    expect(after[0]?.type).toBe('model_health_update');
    expect(after[0]!.envelopeId).toMatch(UUID);
    expect(after[0]!.payload.provider_id).toBe(after[0]!.payload.node_id);
  });

  it('heartbeats: a fresh UUID request_id each, provider_id = node_id, and a light model_hashes list without hashes', async () => {
    await hub.waitFor((f) => f.type === 'heartbeat' && hub.frames.filter((x) => x.type === 'heartbeat').length >= 2, 'two heartbeats', 10_000);
    const beats = hub.frames.filter((f) => f.type === 'heartbeat');
    const ids = beats.map((b) => b.envelopeId);
    for (const id of ids) expect(id).toMatch(UUID);
    expect(new Set(ids).size).toBe(ids.length);
    const hb = beats.at(-1)!.payload;
    expect(hb.provider_id).toBe(hb.node_id);
    const light = hb.model_hashes as Array<Record<string, unknown>>;
    expect(light.map((m) => m.model_id).sort()).toEqual(['my-reranker', QWEN].sort());
    for (const m of light) {
      expect(m).not.toHaveProperty('weight_hash');
      expect(m).not.toHaveProperty('hash_algo');
      // context_source only as detected or override, and only with a length.
      if ('context_source' in m) {
        expect(['detected', 'override']).toContain(m.context_source);
        expect(m.context_length).toBeGreaterThan(0);
      }
    }
  });

  it("an unknown challenge_type gets a verify reply with success false, in Go's words", async () => {
    hub.send({ type: 'verify', request_id: 'v-unknown-1', payload: { challenge_id: 'ch-1', challenge_type: 'quantum', model_id: QWEN, challenge: {} } });
    const reply = await hub.waitFor((f) => f.type === 'verify' && f.payload.challenge_id === 'ch-1', 'the verify reply', 10_000);
    expect(reply.payload).toMatchObject({ challenge_id: 'ch-1', success: false, error: 'unsupported challenge type: quantum' });
  });
});
