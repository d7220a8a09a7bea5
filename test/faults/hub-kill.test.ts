// Fault: the hub connection dies mid-stream, at seeded random points, again and again.
// With resume-v1 (the default dev hub) every answer must arrive complete and in order; without it
// (a hub that never sends `resume`) the request must end with a clear error and the engine request
// must be aborted so the GPU is freed.
import { afterEach, describe, expect, it } from 'vitest';
import { startDevHub, type DevHub } from '../../src/cli/dev-hub';
import { TEST_KEY, registered, startStack, until, type Stack } from '../support/stack';
import { audit, nextDisconnect, report, rng, scale, streamChat, type StreamOutcome } from '../support/faults/faults';

let stack: Stack | undefined;
let replacement: DevHub | undefined;
afterEach(async () => {
  await stack?.close();
  await replacement?.close();
  stack = undefined;
  replacement = undefined;
});

describe('hub killed mid-stream', () => {
  it('with resume-v1: every stream arrives complete, nothing lost or doubled', async () => {
    const r = rng(0x5eed01);
    stack = await startStack({ engines: [{ mode: { generate: 100_000, delayMs: 1 } }], agent: { MaxConcurrentPerEndpoint: 8 } });
    await registered(stack);
    const hub = stack.hub!;
    const engine = stack.engines[0]!;
    const model = engine.modelIds[0]!;
    const rounds = scale(3, 15);
    const counts = { injected: 0, recovered: 0, lost: 0, duplicated: 0 };
    let streams = 0;
    let outOfOrder = 0;
    for (let round = 0; round < rounds; round++) {
      await registered(stack);
      const sizes = Array.from({ length: r.int(2, 6) }, () => r.int(120, 400));
      const chatRequests = (): number => engine.requests.filter((q) => q.path === '/v1/chat/completions').length;
      const requestsBefore = chatRequests();
      let running = sizes.length;
      const all = Promise.all(
        sizes.map((n) =>
          streamChat(hub, model, n).finally(() => {
            running--;
          }),
        ),
      );
      const allDone = all.then(() => undefined);
      // Every request reached the engine before the first kill (a request lost in a kill before the
      // provider read it is the hub's to re-dispatch; that is not what this scenario measures).
      await until(() => chatRequests() >= requestsBefore + sizes.length, 'all streams started');
      const killsThisRound = r.int(1, 3);
      const killedAt: number[] = [];
      for (let k = 0; k < killsThisRound; k++) {
        const target = engine.eventsWritten + r.int(0, 150); // 0: kill again right after the re-register, during replay
        await Promise.race([engine.waitForEvents(target), allDone]);
        if (running === 0) break;
        await until(() => stack!.agent.hubStatus().connected, 'link up before the next kill', 5000);
        const down = nextDisconnect(stack.agent);
        hub.dropProviders();
        await down;
        killedAt.push(engine.eventsWritten);
        counts.injected++;
      }
      const outcomes: StreamOutcome[] = await all;
      outcomes.forEach((o, i) => {
        const n = sizes[i]!;
        const a = audit(o.text, n);
        streams++;
        if (a.outOfOrder) outOfOrder++;
        counts.lost += a.lost + (o.error ? 1 : 0);
        counts.duplicated += a.duplicated;
        if (a.lost === 0 && a.duplicated === 0 && !o.error && o.sawDone) counts.recovered++;
      });
      for (const [i, o] of outcomes.entries())
        expect({ round, i, error: o.error, text: o.text }).toEqual({ round, i, error: undefined, text: expect.any(String) });
      expect(outcomes.map((o) => o.text)).toEqual(sizes.map((n) => Array.from({ length: n }, (_, i) => `tok${i}`).join(' ')));
    }
    report('hub-kill-resume', counts, {
      rounds,
      streams,
      outOfOrder,
      resumed: stack.agent.hubStatus().relay.counters.resumed,
      replayed: stack.agent.hubStatus().relay.counters.replayedMessages,
      hubDeduplicated: hub.behaviour.duplicates,
    });
    expect(counts.injected).toBeGreaterThanOrEqual(rounds);
    expect(stack.agent.hubStatus().relay.counters.resumed).toBeGreaterThan(0);
    expect(counts.lost).toBe(0);
    expect(counts.duplicated).toBe(0);
    expect(outOfOrder).toBe(0);
    expect(counts.recovered).toBe(streams);
    expect(stack.agent.hubStatus().relay.counters.cancelledUnresumed).toBe(0);
  });

  it('without resume: the request ends with a clear error and the engine request is aborted', async () => {
    const r = rng(0x5eed02);
    stack = await startStack({ engines: [{ mode: { generate: 100_000, delayMs: 2 } }], hub: { resume: false } });
    await registered(stack);
    const hub = stack.hub!;
    const engine = stack.engines[0]!;
    const model = engine.modelIds[0]!;
    const rounds = scale(2, 8);
    const counts = { injected: 0, recovered: 0, lost: 0, duplicated: 0 };
    for (let round = 0; round < rounds; round++) {
      await registered(stack); // the engine is now told at once, so a round can begin before the redial
      const n = r.int(2, 3);
      const abortsBefore = engine.abortedCount;
      const pending = Array.from({ length: n }, () => streamChat(hub, model, 50_000));
      await engine.waitForEvents(engine.eventsWritten + r.int(20, 200));
      await until(() => engine.activeStreams >= n, 'all streams running');
      const down = nextDisconnect(stack.agent);
      hub.dropProviders();
      await down;
      counts.injected++;
      const outcomes = await Promise.all(pending);
      for (const o of outcomes) {
        expect(o.error).toMatch(/disconnected before finishing/);
        expect(o.sawDone).toBe(false);
      }
      // The hub did not offer resume-v1 in its register ack: the engine is told at once, as the Go provider does.
      await engine.waitForAbort(abortsBefore + n);
      counts.recovered += outcomes.filter((o) => o.error).length;
      counts.lost += outcomes.filter((o) => !o.error).length;
      for (const o of outcomes) counts.duplicated += audit(o.text, 0).duplicated;
      await until(() => stack!.agent.hubStatus().relay.activeCount === 0, 'no request left running');
    }
    report('hub-kill-no-resume', counts, {
      rounds,
      abortedOnDisconnect: stack.agent.hubStatus().relay.counters.abortedOnDisconnect,
      engineAborts: engine.abortedCount,
    });
    expect(counts.lost).toBe(0);
    expect(counts.duplicated).toBe(0);
    expect(stack.agent.hubStatus().relay.counters.abortedOnDisconnect).toBe(engine.abortedCount);
    expect(stack.agent.hubStatus().relay.counters.cancelledUnresumed).toBe(0);
    expect(stack.agent.hubStatus().relay.retainedRequests).toBe(0);
  });

  it('link down past the retention TTL: running requests are cancelled at the engine and nothing stays retained', async () => {
    stack = await startStack({ engines: [{ mode: { generate: 100_000, delayMs: 2 } }], agent: { ResumeTtlSeconds: 0.5 } });
    await registered(stack);
    const engine = stack.engines[0]!;
    const model = engine.modelIds[0]!;
    const port = stack.hub!.port;
    const clients = [streamChat(stack.hub!, model, 50_000), streamChat(stack.hub!, model, 50_000)];
    await until(() => engine.activeStreams === 2, 'two streams running');
    const down = nextDisconnect(stack.agent);
    await stack.hub!.close(); // and nothing listens on its port: the link stays down
    await down;
    await engine.waitForAbort(2);
    await until(() => stack!.agent.hubStatus().relay.activeCount === 0 && stack!.agent.hubStatus().relay.retainedRequests === 0, 'nothing running or retained');
    const outcomes = await Promise.all(clients);
    report(
      'link-down-past-ttl',
      { injected: 1, recovered: engine.abortedCount, lost: 2 - engine.abortedCount, duplicated: 0 },
      { retainedBytes: stack.agent.hubStatus().relay.retainedBytes },
    );
    expect(outcomes.every((o) => o.error !== undefined && !o.sawDone)).toBe(true);
    expect(stack.agent.hubStatus().relay.retainedBytes).toBe(0);
    // A hub that comes back later gets a clean provider.
    replacement = await startDevHub({ port, token: TEST_KEY });
    await until(() => stack!.agent.hubStatus().connected, 'registered with the hub that came back', 10_000);
    const after = await streamChat(replacement, model, 10);
    expect(after.text).toBe(Array.from({ length: 10 }, (_, i) => `tok${i}`).join(' '));
  });

  it('hub restarted on the same port (its pending requests gone): unresumed requests are cancelled at the engine', async () => {
    stack = await startStack({ engines: [{ mode: { generate: 100_000, delayMs: 2 } }] });
    await registered(stack);
    const engine = stack.engines[0]!;
    const model = engine.modelIds[0]!;
    const port = stack.hub!.port;
    const client = streamChat(stack.hub!, model, 50_000);
    await engine.waitForEvents(50);
    const down = nextDisconnect(stack.agent);
    await stack.hub!.close();
    await down;
    replacement = await startDevHub({ port, token: TEST_KEY });
    await until(() => stack!.agent.hubStatus().connected && replacement!.providers().length === 1, 'registered with the new hub');
    await engine.waitForAbort(1);
    const outcome = await client;
    expect(outcome.error).toBeDefined();
    expect(outcome.sawDone).toBe(false);
    await until(
      () => stack!.agent.hubStatus().relay.activeCount === 0 && stack!.agent.hubStatus().relay.retainedRequests === 0,
      `nothing running or retained (${stack!.agent.hubStatus().relay.activeCount} running, ${stack!.agent.hubStatus().relay.retainedRequests} retained)`,
    );
    report(
      'hub-restart-same-port',
      { injected: 1, recovered: engine.abortedCount, lost: 1 - engine.abortedCount, duplicated: 0 },
      { cancelledUnresumed: stack.agent.hubStatus().relay.counters.cancelledUnresumed },
    );
    expect(stack.agent.hubStatus().relay.counters.cancelledUnresumed).toBe(1);
    // The new hub gets served normally.
    const after = await streamChat(replacement, model, 20);
    expect(after.text).toBe(Array.from({ length: 20 }, (_, i) => `tok${i}`).join(' '));
  });
});
