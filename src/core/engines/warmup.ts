// Warmup: load a model before traffic arrives and check that it serves chat properly. An Ollama model is
// first loaded with Ollama's own call (an empty generate with keep_alive, so it stays loaded); then every
// chat model gets the greeting "Hi" (max_tokens 64) and the reply is checked (warmup-check.ts: a leaked
// chat delimiter, a role boundary, a reply that does not end, an empty one fail; a reasoning model that
// spends the budget thinking is a warning). An embedding model gets one embedding. Each call goes through
// the engine-call service (purposes 'ollama-load' and 'warmup'): admitted like any request, sent to the
// lease's endpoint with the engine's key and the warmup's deadline. The answer says how long it took and
// how much VRAM it took (the sampler's before/after difference, else models.json's gpu_memory). A reply that
// fails the check is the model's own problem: the registry keeps it (the model reads degraded, never
// "healthy", to the console and the hub) until a warmup passes.
import type { WarmupProblem, WarmupResult } from '../../shared/views/models';
import type { GpuSample, RequestSource } from '../../shared/types';
import { EngineCallError, type InferenceRunner } from '../inference/runner';
import { categoryOperation } from '../engine-client/category';
import type { Logger } from '../base/log';
import { elapsedMs, monoMs } from '../base/clock';
import type { ModelRegistry } from '../models/registry';
import { checkGreeting, WARMUP_MAX_TOKENS, WARMUP_PROMPT } from './warmup-check';

function vramUsedMb(s: GpuSample | null): number | null {
  if (!s?.available || s.devices.length === 0) return null;
  return s.devices.reduce((sum, d) => sum + (d.vramUsedMb ?? 0), 0);
}

class WarmupFailed extends Error {
  constructor(
    readonly code: WarmupProblem,
    message: string,
  ) {
    super(message);
  }
}

export class Warmup {
  constructor(
    private readonly registry: ModelRegistry,
    private readonly service: Pick<InferenceRunner, 'generate'>,
    private readonly log: Logger,
    private readonly latestSample: () => GpuSample | null,
    private readonly timeoutMs = 120_000,
    /** The model's health changed with this warmup (the hub hears it). */
    private readonly healthChanged: () => void = () => undefined,
  ) {}

  /** Keeps the model's warmup verdict in the registry; tells the hub when that changed its health. */
  private record(model: string, failure: { code: WarmupProblem; error: string } | undefined): void {
    if (this.registry.setWarmup(model, failure ? { at: Date.now(), ...failure } : undefined)) this.healthChanged();
  }

  /** `lane`: who asked (the hub's warmup message, or the console's button). */
  async run(model: string, lane: RequestSource = 'local'): Promise<WarmupResult> {
    const reg = this.registry.get(model);
    if (!reg || !reg.enabled)
      return { success: false, loadTimeMs: 0, memoryMb: 0, code: 'not_served', error: `model "${model}" is not served here (unknown or disabled)` };
    if (!reg.endpoints.some((e) => this.registry.endpointHealthOf(e.url) !== 'unhealthy')) {
      return { success: false, loadTimeMs: 0, memoryMb: 0, code: 'unhealthy', error: `every engine of "${model}" is unhealthy` };
    }
    const before = vramUsedMb(this.latestSample());
    const started = monoMs();
    const signal = AbortSignal.timeout(this.timeoutMs);
    const common = { model, lane, signal, timeoutMs: this.timeoutMs } as const;
    try {
      let warning: string | undefined;
      if (reg.endpoints.every((e) => e.engineType === 'ollama')) {
        await this.service.generate({
          ...common,
          purpose: 'ollama-load',
          path: '/api/generate',
          body: { model, prompt: '', keep_alive: '30m', stream: false },
        });
      }
      const op = categoryOperation(reg.entry?.category);
      if (op === 'embeddings') {
        await this.service.generate({ ...common, purpose: 'warmup', operation: op, body: { model, input: WARMUP_PROMPT } });
      } else if (!op) {
        const r = await this.service.generate({
          ...common,
          purpose: 'warmup',
          operation: 'chat/completions',
          body: { model, messages: [{ role: 'user', content: WARMUP_PROMPT }], max_tokens: WARMUP_MAX_TOKENS, temperature: 0 },
        });
        const verdict = checkGreeting(r.json);
        if (!verdict.ok) throw new WarmupFailed(verdict.code, verdict.error);
        warning = verdict.warning;
      }
      const after = vramUsedMb(this.latestSample());
      const memoryMb = before !== null && after !== null && after > before ? after - before : (reg.entry?.gpu_memory ?? 0);
      const loadTimeMs = elapsedMs(started);
      this.log.info(`warmed up ${model} in ${loadTimeMs} ms${warning ? ` (${warning})` : ''}`);
      this.record(model, undefined);
      return { success: true, loadTimeMs, memoryMb, ...(warning ? { warning } : {}) };
    } catch (e) {
      const code: WarmupProblem = e instanceof WarmupFailed ? e.code : 'engine_error';
      const why = e instanceof EngineCallError && e.result.status === 'rejected' ? `not admitted: ${e.message}` : (e as Error).message;
      const error = `warmup of ${model} failed: ${why}`;
      this.log.warn(error);
      // The reply itself was wrong (it does not stop, leaks the template…): the model's own, kept on it. An
      // engine that did not answer is the deep check's and the endpoint's to say.
      if (e instanceof WarmupFailed) this.record(model, { code, error });
      return { success: false, loadTimeMs: elapsedMs(started), memoryMb: 0, code, error };
    }
  }
}
