// What the real llama-server says it allocated for a model: its own log lines at -lv 4
// ("model buffer size = 21.39 MiB", "KV buffer size = 9.00 MiB"), summed over its devices, read from one
// start of ../shared/engines/llama.cpp's server. The fit estimate is checked against these (test/live,
// and the bench's figure beside them).
import { spawn } from 'node:child_process';
import path from 'node:path';
import { LLAMA_DIR } from './llama';

export interface LlamaBuffers {
  modelMiB: number;
  kvMiB: number;
  /** The context llama-server allocated in all (n_ctx) and per slot. */
  nCtx: number;
  nCtxSlot: number;
  slots: number;
}

/** Sums the "<device> model buffer size = X MiB" and "<device> KV buffer size = Y MiB" lines of a llama-server log. */
export function parseBuffers(log: string): LlamaBuffers | undefined {
  const sum = (re: RegExp) => [...log.matchAll(re)].reduce((a, m) => a + Number(m[1]), 0);
  const modelMiB = sum(/model buffer size\s*=\s*([\d.]+) MiB/g);
  const kvMiB = sum(/KV buffer size\s*=\s*([\d.]+) MiB/g);
  const slotsM = /n_slots = (\d+), n_ctx_slot = (\d+)/.exec(log);
  const ctxM = /llama_context: n_ctx\s+=\s+(\d+)/.exec(log);
  if (!modelMiB || !kvMiB || !slotsM || !ctxM) return undefined;
  return { modelMiB, kvMiB, nCtx: Number(ctxM[1]), slots: Number(slotsM[1]), nCtxSlot: Number(slotsM[2]) };
}

/**
 * Starts llama-server on `model` with `args` on a port the OS picks (--port 0 binds nothing it keeps: the
 * server is stopped as soon as it says the model is loaded), and returns what it allocated.
 */
export function llamaBuffers(model: string, args: string[] = [], timeoutMs = 60_000): Promise<LlamaBuffers> {
  return new Promise((resolve, reject) => {
    const proc = spawn(path.join(LLAMA_DIR, 'start.sh'), ['--port', '0', '-m', model, '-lv', '4', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let log = '';
    let done = false;
    const finish = (err?: Error): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      proc.kill('SIGKILL');
      if (err) return reject(err);
      const b = parseBuffers(log);
      if (b) resolve(b);
      else reject(new Error(`llama-server reported no buffer sizes: ${log.slice(-2000)}`));
    };
    const timer = setTimeout(() => finish(new Error(`llama-server did not load ${model} within ${timeoutMs} ms`)), timeoutMs);
    const onData = (d: Buffer): void => {
      log += d.toString();
      if (/model loaded|listening on/.test(log)) finish();
    };
    proc.stdout.on('data', onData);
    proc.stderr.on('data', onData);
    proc.once('exit', () => finish());
    proc.once('error', (e) => finish(e));
  });
}
