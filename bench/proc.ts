// What the soaks read of the agent's process and of a streamed answer, and how they wait: one copy for
// bench/soak.ts and bench/fault-soak.ts.
import fs from 'node:fs';

/** The process's resident memory (MB, one decimal) and open file descriptors, from /proc (Linux). */
export function procStatus(pid: number): { rssMb: number; fds: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)\s+kB/.exec(status)?.[1] ?? NaN);
  return { rssMb: Math.round(kb / 102.4) / 10, fds: fs.readdirSync(`/proc/${pid}/fd`).length };
}

/** Resolves once `cond` holds, checked every 50 ms; rejects after `timeoutMs` on the monotonic clock. */
export function waitFor(cond: () => boolean, what: string, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const tick = (): void => {
      if (cond()) return resolve();
      if (performance.now() > deadline) return reject(new Error(`soak: timed out waiting for ${what}`));
      setTimeout(tick, 50);
    };
    tick();
  });
}

/** A chat stream's SSE body as its text and the error an event carried, if any (the last one). */
export function streamedText(body: string): { content: string; error?: string } {
  let content = '';
  let error: string | undefined;
  for (const line of body.split('\n')) {
    if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
    const ev = JSON.parse(line.slice(6)) as { error?: { message?: string }; choices?: Array<{ delta?: { content?: string } }> };
    if (ev.error) error = ev.error.message ?? 'error';
    content += ev.choices?.[0]?.delta?.content ?? '';
  }
  return error === undefined ? { content } : { content, error };
}
