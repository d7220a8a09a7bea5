// Console verbs that are not about serving: the test prompt ("Try it" on Engines & models) and the
// version/build Settings shows.
import crypto from 'node:crypto';
import type { AppInfoView, TryResult } from '../../shared/bridge';
import type { Agent } from '../agent';

/** At most this many test prompts run at once (each also counts against the model's own limits). */
const MAX_TRIES = 2;
let running = 0;

/**
 * Sends a short chat through the same scheduler and engine client as any request, as a `local`
 * request (it shows in Requests and the ledger like gateway traffic, never as hub earnings). Returns
 * at once with the request id; the answer streams to the console as request.update/request.text.
 */
export function startTestPrompt(a: Agent, model: string, prompt: string, maxTokens: number): TryResult {
  const m = a.registry.get(model);
  if (!m) throw new Error(`No model "${model}" is known here. Rescan engines or add it to models.json.`);
  if (!m.enabled) throw new Error(`"${model}" is switched off. Switch it on in the Models table to try it.`);
  if (running >= MAX_TRIES) throw new Error('Two test prompts are already running; wait for one to finish.');
  const id = `try-${crypto.randomUUID()}`;
  running++;
  void a.runner
    .run({
      id,
      source: 'local',
      model,
      stream: true,
      body: { model, stream: true, max_tokens: maxTokens, messages: [{ role: 'user', content: prompt }] },
      signal: AbortSignal.timeout(120_000),
    })
    .finally(() => {
      running--;
    });
  return { id };
}

export function appInfo(version: string, mode: 'desktop' | 'headless'): AppInfoView {
  const electron = process.versions.electron ? `Electron ${process.versions.electron}, ` : '';
  return { version, mode, build: `${electron}Node ${process.versions.node}, ${process.platform}-${process.arch}` };
}
