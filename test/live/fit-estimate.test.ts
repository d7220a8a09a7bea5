// The fit estimate against the real llama-server's own figures: for both shared GGUFs, at the plans the
// tests and the managed engine use, the estimated weights + KV cache are within 10 % of what llama-server
// reports it allocated ("model buffer size" + "KV buffer size").
import { describe, expect, it } from 'vitest';
import { estimateVram, MIB } from '../../src/core/fit/estimate';
import { readGgufFacts } from '../../src/core/fit/gguf-facts';
import { LLAMA_PRESENT, SMALL, TINY } from '../support/live/llama';
import { llamaBuffers } from '../support/live/llama-buffers';

const SKIP = 'skipped: ../shared/engines/llama.cpp is absent (this suite runs the real llama-server)';

describe.skipIf(!LLAMA_PRESENT)(LLAMA_PRESENT ? 'the fit estimate beside llama-server' : `the fit estimate beside llama-server — ${SKIP}`, () => {
  const plans: Array<{ file: string; name: string; ctx: number; slots: number }> = [
    { file: TINY, name: 'tiny.gguf', ctx: 512, slots: 2 },
    { file: SMALL, name: 'small.gguf', ctx: 512, slots: 2 },
    { file: SMALL, name: 'small.gguf', ctx: 256, slots: 4 },
    { file: SMALL, name: 'small.gguf', ctx: 512, slots: 1 },
  ];
  for (const p of plans) {
    it(`${p.name} at ${p.ctx} tokens × ${p.slots} slot(s): weights + KV within 10 % of llama-server's buffers`, async () => {
      const facts = await readGgufFacts(p.file);
      const est = estimateVram(facts.weights, facts.shape, { contextLength: p.ctx, slots: p.slots, overheadBytes: 0 });
      expect(est.known).toBe(true);
      if (!est.known) return;
      const real = await llamaBuffers(p.file, ['-c', String(p.ctx * p.slots), '-np', String(p.slots)]);
      expect(real.nCtxSlot).toBe(p.ctx);
      const ours = (est.weightsBytes + est.kvBytes) / MIB;
      const theirs = real.modelMiB + real.kvMiB;
      expect(Math.abs(ours - theirs) / theirs).toBeLessThan(0.1);
      // Each term on its own, too: one error must not hide another.
      expect(Math.abs(est.weightsBytes / MIB - real.modelMiB) / real.modelMiB).toBeLessThan(0.1);
      expect(Math.abs(est.kvBytes / MIB - real.kvMiB) / real.kvMiB).toBeLessThan(0.1);
    }, 90_000);
  }
});
