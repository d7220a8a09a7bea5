// A model self-healing withdrew is not reported to the hub at all: not in the register's models, and not in the
// health the heartbeats and model_health_update carry (the hub would keep a withdrawn model's "healthy"), while
// its neighbour on the same engine goes on being reported. The deep check is off, so its health reads fine
// while its requests fail: the error-rate rule withdraws it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chat, registered, startStack, until, type Stack } from '../../support/stack';

describe('a withdrawn model', () => {
  let s: Stack;
  const provider = () => s.hub!.providers().find((p) => p.connected);

  beforeAll(async () => {
    s = await startStack({
      engines: [{ models: ['org/good', 'org/broken'] }],
      agent: { DeepHealthCheckEvery: 0, SelfHealHoldSeconds: 600 },
    });
    await registered(s);
    await until(() => provider()?.health['org/broken'] === 'healthy', 'both reported healthy first');
  }, 30_000);

  afterAll(async () => {
    await s?.close();
  }, 30_000);

  it('is left out of the health the hub hears, its neighbour stays', async () => {
    s.engines[0]!.setModelMode('org/broken', { status: 500, body: { error: { message: 'broken weights' } } });
    for (let i = 0; i < 10; i++) await chat(s.hub!, { model: 'org/broken', messages: [{ role: 'user', content: 'hi' }] });
    await until(() => s.agent.snapshot().models.some((m) => m.id === 'org/broken' && m.withdrawn), 'withdrawn', 10_000);
    await until(() => provider()?.models.includes('org/broken') === false, 'not in the register', 5000);
    // The next heartbeat replaces the hub's health map: the withdrawn model is not in it.
    await until(() => provider() !== undefined && !('org/broken' in provider()!.health), 'not in the health the hub hears', 10_000);
    expect(provider()!.health['org/good']).toBe('healthy');
  }, 60_000);
});
