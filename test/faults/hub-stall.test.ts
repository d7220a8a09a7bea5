// Fault: the hub stops reading its socket (a TCP stall), stops answering pings, stops acking
// heartbeats. Backpressure must reach the engine (it is read more slowly instead of the agent
// buffering without limit), control messages must not wait behind a data backlog, and a stall that
// outlasts the link's deadlines must end in a reconnect after which every stream resumes intact.
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { modelOf, registered, startStack, until, type Stack } from '../support/stack';
import { generatedText } from '../support/traces';
import { audit, FULL, nextDisconnect, report, streamChat } from '../support/faults/faults';
import type { LinkReasonCode } from '../../src/shared/types';

let stack: Stack | undefined;
afterEach(async () => {
  if (stack?.hub) stack.hub.behaviour.stallReads = false;
  await stack?.close();
  stack = undefined;
});

/** Data lane high-water mark of HubLink (its default). */
const HIGH_WATER = 256 * 1024;

/** Most a TCP connection's two ends may buffer on this host (Linux tcp_wmem + tcp_rmem maxima). */
function kernelSocketBuffers(): number {
  const max = (file: string): number => {
    try {
      return Number(fs.readFileSync(file, 'utf8').trim().split(/\s+/)[2]);
    } catch {
      return 32 * 1024 * 1024; // not Linux: a generous default
    }
  };
  return max('/proc/sys/net/ipv4/tcp_wmem') + max('/proc/sys/net/ipv4/tcp_rmem');
}

describe('hub that stops reading (TCP stall)', () => {
  it('slows the engine instead of buffering, keeps control messages ahead of data, and flows on intact when reads resume', async () => {
    // Deadlines long enough that this stall (a few seconds, more on a loaded machine) is not declared a
    // dead link: 3 unacked heartbeats at 5 s, read deadline 60 s.
    // A second engine serves another model: it goes down during the stall, and the agent tells the hub
    // at once (model_health_update, a control message sent like heartbeats and acks).
    stack = await startStack({
      engines: [{ mode: { generate: 100_000 }, models: ['stream-model'] }, { models: ['probe-model'] }],
      models: { 'stream-model': { engine: 0 }, 'probe-model': { engine: 1 } },
      agent: { HeartbeatIntervalSeconds: 5, ReadTimeoutSeconds: 60, PingIntervalSeconds: 0.5 },
    });
    await registered(stack);
    const { hub, agent } = { hub: stack.hub!, agent: stack.agent };
    const engine = stack.engines[0]!;
    const probeHealth = (): string | undefined => modelOf(agent, 'probe-model')?.health;
    await until(() => probeHealth() === 'healthy', 'the probe model healthy');
    const n = 100_000; // far more than the socket buffers on both sides hold
    const arrivals: Array<{ type: string; bytes: number; at: number; probe?: boolean; hb?: number }> = [];
    hub.events.on('message', (m: { type: string; payload: Record<string, unknown>; requestId?: string }) => {
      arrivals.push({
        type: m.type,
        bytes: m.type === 'stream_chunk' ? JSON.stringify(m.payload).length : 0,
        at: Date.now(),
        ...(m.type === 'model_health_update' && (m.payload.model_health as Record<string, string> | undefined)?.['probe-model'] === 'unhealthy'
          ? { probe: true }
          : {}),
        ...(m.type === 'heartbeat' ? { hb: Number(m.requestId?.slice(3)) } : {}),
      });
    });
    const ctl = new AbortController();
    const client = streamChat(hub, 'stream-model', n, ctl.signal);
    const chunks = (): Array<Record<string, unknown>> => hub.received.filter((m) => m.type === 'stream_chunk').map((m) => m.payload);
    await until(() => chunks().length >= 200, 'streaming');
    hub.behaviour.stallReads = true;
    // Backpressure reaches the agent's data lane, then the engine.
    await until(() => agent.hubStatus().queuedDataMessages > 0 && engine.waitingForDrain, 'data lane full and the engine waiting for drain', 20_000);
    // Buffers between engine and agent (kernel, HTTP parser) may still be filling on a busy machine:
    // wait until the engine's accepted count has held still for 300 ms, then observe.
    let last = -1;
    let stableSince = Date.now();
    await until(
      () => {
        if (engine.eventsAccepted !== last) {
          last = engine.eventsAccepted;
          stableSince = Date.now();
        }
        return Date.now() - stableSince >= 300;
      },
      'the pipeline settled',
      20_000,
    );
    const acceptedAtFull = engine.eventsAccepted;
    let maxQueued = 0;
    // A bounded observation window (no event marks "nothing happened").
    const windowEnd = Date.now() + 1500;
    await until(
      () => {
        maxQueued = Math.max(maxQueued, agent.hubStatus().queuedDataMessages);
        return Date.now() >= windowEnd;
      },
      'observation window',
      3000,
    );
    const acceptedGrowth = engine.eventsAccepted - acceptedAtFull;
    expect(agent.hubStatus().connected).toBe(true);
    expect(maxQueued).toBeLessThanOrEqual(1); // one waiting writer per stream, nothing piles up
    expect(acceptedGrowth).toBe(0); // the engine is not read while the hub does not read
    // A control message now, while data waits (model health, sent like heartbeats and acks): how much
    // data must the hub read before it, once reads resume?
    await stack.engines[1]!.setMode('down');
    await until(() => probeHealth() === 'unhealthy', 'the agent saw the probe engine down (and told the hub)', 10_000);
    const resumedAt = Date.now();
    const seenBefore = arrivals.length;
    hub.behaviour.stallReads = false;
    await until(() => arrivals.some((a) => a.probe), 'the control message arrives', 10_000);
    const after = arrivals.slice(seenBefore);
    const probeIndex = after.findIndex((a) => a.probe);
    const dataBytesAhead = after.slice(0, probeIndex).reduce((sum, a) => sum + a.bytes, 0);
    const controlDelayMs = after[probeIndex]!.at - resumedAt;
    const chunksAtProbe = chunks().length;
    let text: string;
    let expected: string;
    if (FULL) {
      const outcome = await client;
      expect(outcome.error).toBeUndefined();
      text = outcome.text;
      expected = generatedText(n);
    } else {
      // Short form: once data flows again (the hub gets thousands more chunks), the client leaves;
      // what the hub received must be seq 1..K with each token exactly once.
      await until(() => chunks().length > chunksAtProbe + 2000 || engine.activeStreams === 0, 'data flowing again', 20_000);
      ctl.abort();
      await client;
      await until(() => agent.hubStatus().relay.activeCount === 0, 'request ended');
      const got = chunks();
      expect(got.map((c) => c.seq)).toEqual(got.map((_, i) => i + 1));
      text = got.map((c) => (c.chunk as { choices?: Array<{ delta?: { content?: string } }> } | null)?.choices?.[0]?.delta?.content ?? '').join('');
      expected = generatedText(text.split(' ').length);
    }
    const a = audit(text, expected.split(' ').length);
    const hbs = arrivals.filter((x) => x.hb !== undefined).map((x) => x.hb!);
    report(
      'hub-stall-reads',
      { injected: 1, recovered: text === expected ? 1 : 0, lost: a.lost, duplicated: a.duplicated },
      {
        maxQueuedDataMessages: maxQueued,
        engineAcceptedDuringStall: acceptedGrowth,
        dataBytesAheadOfControl: dataBytesAhead,
        dataBytesAfterControl: after.slice(probeIndex + 1).reduce((sum, x) => sum + x.bytes, 0),
        controlDelayAfterResumeMs: controlDelayMs,
        kernelSocketBuffersMax: kernelSocketBuffers(),
        reconnects: agent.hubStatus().counters.dials - 1,
      },
    );
    expect(text).toBe(expected);
    expect(text.length).toBeGreaterThan(50_000);
    expect(agent.hubStatus().counters.dials).toBe(1); // no reconnect was needed
    expect(hbs).toEqual(hbs.map((_, i) => hbs[0]! + i)); // heartbeats: none lost or reordered
    expect(controlDelayMs).toBeLessThan(5000);
    // The agent keeps at most the lane's high-water mark ahead of control in its own buffers; the rest
    // is what the two kernels buffer (agent send + hub receive), which no process can make smaller.
    expect(dataBytesAhead).toBeLessThan(HIGH_WATER + kernelSocketBuffers());
  });
});

/** Three streams that must come through `faults` link drops caused by `inject`, intact. */
async function survive(name: string, inject: () => void, restore: () => void, faults: number, code: LinkReasonCode): Promise<void> {
  const { hub, agent } = { hub: stack!.hub!, agent: stack!.agent };
  const engine = stack!.engines[0]!;
  const sizes = [500, 650, 800];
  const clients = sizes.map((n) => streamChat(hub, engine.modelIds[0]!, n));
  await until(() => engine.activeStreams === sizes.length && engine.eventsWritten >= 100, 'streams running');
  const dialsBefore = agent.hubStatus().counters.dials;
  inject();
  const reasons: string[] = [];
  const codes: LinkReasonCode[] = [];
  for (let i = 0; i < faults; i++) {
    const down = await nextDisconnect(agent);
    reasons.push(down.reason);
    codes.push(down.code);
    if (i === faults - 1) restore(); // the fault stays through the earlier reconnects
    await until(() => agent.hubStatus().connected, 'reconnected', 5000);
  }
  const outcomes = await Promise.all(clients);
  const counts = { injected: faults, recovered: 0, lost: 0, duplicated: 0 };
  outcomes.forEach((o, i) => {
    const a = audit(o.text, sizes[i]!);
    counts.lost += a.lost + (o.error ? 1 : 0);
    counts.duplicated += a.duplicated;
    if (o.text === generatedText(sizes[i]!) && !o.error) counts.recovered++;
  });
  report(name, counts, { streams: sizes.length, reasons: [...new Set(reasons)], resumed: agent.hubStatus().relay.counters.resumed });
  expect(codes).toEqual(codes.map(() => code));
  expect(agent.hubStatus().counters.dials - dialsBefore).toBe(faults);
  expect(outcomes.map((o) => o.error)).toEqual(sizes.map(() => undefined));
  expect(outcomes.map((o) => o.text)).toEqual(sizes.map((n) => generatedText(n)));
  expect(counts.lost).toBe(0);
  expect(counts.duplicated).toBe(0);
  expect(agent.hubStatus().relay.counters.resumed).toBeGreaterThanOrEqual(sizes.length);
}

describe('hub that stops answering', () => {
  it('a stall past the heartbeat deadline ends in a reconnect, and every stream resumes intact', async () => {
    stack = await startStack({ engines: [{ mode: { generate: 100_000, delayMs: 2 } }], agent: { HeartbeatIntervalSeconds: 0.2, ReadTimeoutSeconds: 30 } });
    await registered(stack);
    const hub = stack.hub!;
    await survive(
      'hub-stall-past-deadline',
      () => (hub.behaviour.stallReads = true),
      () => (hub.behaviour.stallReads = false),
      1,
      'HEARTBEAT_UNACKED',
    );
  });

  it('stops answering pings: the read deadline drops the link, streams resume', async () => {
    // Heartbeats far apart, so their acks do not keep the read deadline alive.
    stack = await startStack({
      engines: [{ mode: { generate: 100_000, delayMs: 2 } }],
      agent: { HeartbeatIntervalSeconds: 30, ReadTimeoutSeconds: 0.4, PingIntervalSeconds: 0.1 },
    });
    await registered(stack);
    const hub = stack.hub!;
    await survive(
      'hub-no-pongs',
      () => (hub.behaviour.answerPings = false),
      () => (hub.behaviour.answerPings = true),
      2,
      'READ_DEADLINE',
    );
  });

  it('stops acking heartbeats: 3 unacked heartbeats drop the link, streams resume', async () => {
    stack = await startStack({ engines: [{ mode: { generate: 100_000, delayMs: 2 } }], agent: { HeartbeatIntervalSeconds: 0.1, ReadTimeoutSeconds: 30 } });
    await registered(stack);
    const hub = stack.hub!;
    await survive(
      'hub-no-heartbeat-acks',
      () => (hub.behaviour.ackHeartbeats = false),
      () => (hub.behaviour.ackHeartbeats = true),
      2,
      'HEARTBEAT_UNACKED',
    );
  });
});
