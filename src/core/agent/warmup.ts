// Warmup: load a model before traffic arrives. Ollama has a load API (an empty generate with
// keep_alive); other engines get a 1-token request. The answer says how long it took and how much
// VRAM it took (the sampler's before/after difference, else models.json's gpu_memory). Both go through
// the inference service (InferenceRunner.generate): admitted like any request and sent to the lease's
// endpoint, so a warmup never exceeds MaxConcurrentPerEndpoint.
import http from 'node:http';
import type { WarmupResult } from '../../shared/bridge';
import type { GpuSample, RequestSource } from '../../shared/types';
import { requestJson } from '../engine/client';
import type { EngineEndpoint, NonStreamResult } from '../engine/types';
import type { InferenceRunner } from '../inference/runner';
import type { Logger } from '../log';
import type { ModelRegistry } from './models';

function vramUsedMb(s: GpuSample | null): number | null {
  if (!s?.available || s.devices.length === 0) return null;
  return s.devices.reduce((sum, d) => sum + (d.vramUsedMb ?? 0), 0);
}

function ollamaLoad(ep: EngineEndpoint, model: string, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ model, prompt: '', keep_alive: '30m', stream: false });
    const req = http.request(`${ep.url}/api/generate`, { method: 'POST', headers: { 'content-type': 'application/json' }, timeout: timeoutMs }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`Ollama answered HTTP ${res.statusCode} to the load request`))));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)));
    req.on('error', reject);
    req.end(body);
  });
}

export class Warmup {
  constructor(
    private readonly registry: ModelRegistry,
    private readonly service: Pick<InferenceRunner, 'generate'>,
    private readonly log: Logger,
    private readonly latestSample: () => GpuSample | null,
    private readonly timeoutMs = 120_000,
  ) {}

  /** `lane`: who asked (the hub's warmup message, or the console's button). */
  async run(model: string, lane: RequestSource = 'local'): Promise<WarmupResult> {
    const reg = this.registry.get(model);
    if (!reg || !reg.enabled) return { success: false, loadTimeMs: 0, memoryMb: 0, error: `model "${model}" is not served here (unknown or disabled)` };
    if (!reg.endpoints.some((e) => this.registry.endpointHealthOf(e.url) !== 'unhealthy')) {
      return { success: false, loadTimeMs: 0, memoryMb: 0, error: `every engine of "${model}" is unhealthy` };
    }
    const before = vramUsedMb(this.latestSample());
    const started = Date.now();
    try {
      const signal = AbortSignal.timeout(this.timeoutMs);
      await this.service.generate({
        kind: 'warmup',
        model,
        lane,
        signal,
        call: (ep: EngineEndpoint): Promise<Partial<NonStreamResult>> =>
          ep.engineType === 'ollama'
            ? ollamaLoad(ep, ep.localModel ?? model, this.timeoutMs).then(() => ({}))
            : requestJson({ endpoint: ep, path: '/v1/chat/completions', body: { model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 1, temperature: 0 }, signal }),
      });
      const after = vramUsedMb(this.latestSample());
      const memoryMb = before !== null && after !== null && after > before ? after - before : (reg.entry?.gpu_memory ?? 0);
      const loadTimeMs = Date.now() - started;
      this.log.info(`warmed up ${model} in ${loadTimeMs} ms`);
      return { success: true, loadTimeMs, memoryMb };
    } catch (e) {
      const error = `warmup of ${model} failed: ${(e as Error).message}`;
      this.log.warn(error);
      return { success: false, loadTimeMs: Date.now() - started, memoryMb: 0, error };
    }
  }
}
