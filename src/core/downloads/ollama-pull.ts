// Downloads of the third kind (beside the Swan repository and the Hugging Face Hub): an Ollama engine fetching a
// model into its own store, its progress summed here; the earnings feature starts them ("serve this").
// "Serve this" with Ollama: POST {engine}/api/pull {model, stream: true}. Ollama answers with one JSON
// object per line — {status: "pulling manifest"}, {status: "pulling <digest>", digest, total, completed}
// per layer, {status: "verifying sha256 digest"}, {status: "writing manifest"}, {status: "success"} —
// or {error: "..."} (Ollama API docs, "Pull a Model"). Progress is summed over layers. Only an Ollama
// engine this agent found may be asked (never a URL from the UI), one pull per engine and model. The call
// goes through the engine-call service (purpose 'ollama-pull': no slot, not booked), with the abort signal
// of the pull's idle timer.
import type { PullStateView } from '../../shared/views/demand';
import type { EngineBody, Opened } from '../engine-client/http';
import type { EngineEndpoint } from '../engine-client/types';
import type { Logger } from '../base/log';
import { DemandError } from '../platform/demand';
import { JSON_LIMITS, parseJson } from '../http/bounded-json';

/** Opens the pull on the engine (InferenceRunner.open with the purpose 'ollama-pull'). */
export type PullOpener = (target: EngineEndpoint, path: string, body: EngineBody, signal: AbortSignal) => Promise<Opened>;

/** One pull (the bridge's type is its one home). */
export type PullState = PullStateView;

export const OLLAMA_MODEL_NAME = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,199}$/;
const IDLE_MS = 120_000;
const MAX_LINE = 64 * 1024;

export class OllamaPulls {
  private readonly pulls = new Map<string, PullState>();

  constructor(
    private readonly log: Logger,
    private readonly onChange: () => void = () => {},
    /** Called with the live state: it may still set `error` (a step after the pull failed). */
    private readonly onSuccess: (p: PullState) => void = () => {},
    private readonly open: PullOpener = () => Promise.reject(new Error('pulling needs the running agent')),
  ) {}

  list(): PullState[] {
    return [...this.pulls.values()].map((p) => ({ ...p }));
  }

  /** Starts a pull (or returns the running one). `engineUrl` must be a known Ollama engine; `networkId`
   * is the network model the pull is for (announced with `model` as its local name once pulled, unless
   * `notAnnounced` says why not). */
  start(engineUrl: string, model: string, networkId?: string, notAnnounced?: PullState['notAnnounced']): PullState {
    if (!OLLAMA_MODEL_NAME.test(model))
      throw new DemandError('not_model_name', `"${model.slice(0, 64)}" is not an Ollama model name (like llama3.1:8b or qwen2.5:7b-instruct).`, 'model');
    const key = `${engineUrl} ${model}`;
    const cur = this.pulls.get(key);
    if (cur && !cur.done) return { ...cur };
    const p: PullState = {
      engineUrl,
      model,
      ...(networkId ? { networkId } : {}),
      ...(notAnnounced ? { notAnnounced } : {}),
      status: 'starting',
      completed: 0,
      total: 0,
      done: false,
      startedAt: Date.now(),
    };
    this.pulls.set(key, p);
    this.log.info(`pulling ${model} into the Ollama engine at ${engineUrl}`);
    void this.run(p);
    return { ...p };
  }

  private async run(p: PullState): Promise<void> {
    const ctl = new AbortController();
    let idle = setTimeout(() => ctl.abort(), IDLE_MS);
    const layers = new Map<string, { completed: number; total: number }>();
    const finish = (error?: string): void => {
      clearTimeout(idle);
      p.done = true;
      p.finishedAt = Date.now();
      if (error) {
        p.error = error;
        this.log.error(`pulling ${p.model} into ${p.engineUrl} failed: ${error}`);
      } else {
        p.status = 'success';
        this.log.info(`pulled ${p.model} into ${p.engineUrl}`);
        this.onSuccess(p);
      }
      this.onChange();
    };
    let res: Opened['res'] | undefined;
    try {
      const o = await this.open({ url: p.engineUrl }, '/api/pull', { json: { model: p.model, stream: true } }, ctl.signal);
      // From here the idle timer watches the download (a pull takes minutes), not the open's own deadline.
      o.done();
      res = o.res;
      const body = res;
      ctl.signal.addEventListener('abort', () => body.destroy(new Error('idle')), { once: true });
      const status = res.statusCode ?? 0;
      let buf = '';
      let ended = false;
      for await (const value of res) {
        clearTimeout(idle);
        idle = setTimeout(() => ctl.abort(), IDLE_MS);
        buf += (value as Buffer).toString('utf8');
        if (buf.length > MAX_LINE && !buf.includes('\n')) return finish('Ollama sent a line over 64 KB; stopped reading');
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl).trim();
          buf = buf.slice(nl + 1);
          if (!line) continue;
          let m: { status?: unknown; digest?: unknown; total?: unknown; completed?: unknown; error?: unknown };
          try {
            m = parseJson(line, JSON_LIMITS.engine) as typeof m;
          } catch {
            return finish(`Ollama sent a line that is not JSON: ${line.slice(0, 120)}`);
          }
          if (typeof m.error === 'string') return finish(m.error.slice(0, 500));
          if (typeof m.status === 'string') p.status = m.status.slice(0, 200);
          if (typeof m.digest === 'string' && typeof m.total === 'number' && Number.isFinite(m.total) && m.total >= 0) {
            const completed = typeof m.completed === 'number' && Number.isFinite(m.completed) ? Math.max(0, Math.min(m.completed, m.total)) : 0;
            layers.set(m.digest, { completed, total: m.total });
            p.completed = [...layers.values()].reduce((s, l) => s + l.completed, 0);
            p.total = [...layers.values()].reduce((s, l) => s + l.total, 0);
          }
          if (p.status === 'success') ended = true;
          this.onChange();
        }
      }
      if (status < 200 || status >= 300) return finish(`Ollama answered HTTP ${status}`);
      finish(ended ? undefined : 'the pull ended before Ollama said "success"');
    } catch (e) {
      finish(ctl.signal.aborted ? `Ollama sent nothing for ${IDLE_MS / 1000} s` : `could not reach Ollama at ${p.engineUrl} (${(e as Error).message})`);
    } finally {
      res?.destroy();
    }
  }
}
