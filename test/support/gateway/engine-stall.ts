// "The engine stopped": its writes hit backpressure and no event was written for a quiet period. The
// test engine writes in synchronous bursts, so one backpressure moment alone can be transient; this is
// a bounded poll (there is no event for "nothing more happened").
import { setTimeout as sleep } from 'node:timers/promises';
import type { TestEngine } from '../engine-server';

/** Resolves with eventsWritten once the engine has been stuck on backpressure for quietMs. */
export async function engineStalled(engine: TestEngine, quietMs = 150, deadlineMs = 15_000): Promise<number> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    await engine.waitForBackpressure();
    const before = engine.eventsWritten;
    await sleep(quietMs);
    if (engine.waitingForDrain && engine.eventsWritten === before) return before;
    if (Date.now() > deadline) throw new Error(`the engine kept writing for ${deadlineMs} ms (${engine.eventsWritten} events)`);
  }
}
