// An engine the owner added in the console (by HOST:PORT, not in models.json, not on a default port) is
// killed and started again on the same address: the console keeps its model, shown down, while it is gone,
// and the model serves again (a request through the hub answered 200) within one health interval of the
// engine answering — no Rescan, no Serve toggle, no agent restart. The stack's agent checks health every
// 2 s (HealthCheckIntervalSeconds = 2, e2e/support/stack.ts).
import net from 'node:net';
import { startSimulatedEngine, type SimulatedEngine } from '../src/cli/sim-engine';
import { expect, go, slug, test } from './support/fixtures';

/** A port free now, so the engine can be started again on the very same address. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

const HEALTH_INTERVAL_MS = 2000;
/** What a loaded two-core machine adds to a probe and a redraw, beside the interval itself. */
const SLACK_MS = 2000;
const MODEL = 'restart/model-1b';

test('an engine added in the console is killed and restarted: down meanwhile, serving again within one health interval', async ({ app, stack }) => {
  test.slow();
  const port = await freePort();
  let engine: SimulatedEngine | undefined = await startSimulatedEngine({ host: '127.0.0.1', port, models: [MODEL], tokensPerSecond: 400, firstTokenMs: 10 });
  try {
    await go(app, 'engines');
    await app.getByTestId('endpoint-url').fill(`127.0.0.1:${port}`);
    await app.getByTestId('endpoint-model').fill(MODEL);
    await app.getByTestId('endpoint-add').click();
    await expect(app.getByTestId('endpoint-result')).toContainText(`Added http://127.0.0.1:${port}:`);
    const row = app.getByTestId(`model-row-${slug(MODEL)}`);
    await expect(row).toHaveAttribute('data-enabled', 'true');
    await expect(app.getByTestId(`model-health-${slug(MODEL)}`)).toHaveText('healthy');
    await expect.poll(async () => (await stack.provider())?.models).toContain(MODEL);
    expect(await stack.chat(MODEL, 4)).toContain('[simulated]');

    // Killed: the model stays in the table, shown down, and so does its engine.
    await engine.close();
    engine = undefined;
    await expect(app.getByTestId(`model-health-${slug(MODEL)}`)).toHaveText('unhealthy');
    await expect(row).toBeVisible();
    await expect(app.getByTestId('engine-row').filter({ hasText: `127.0.0.1:${port}` })).toContainText('not answering');

    // Started again on the same address: healthy within one health interval, and the hub routes to it.
    engine = await startSimulatedEngine({ host: '127.0.0.1', port, models: [MODEL], tokensPerSecond: 400, firstTokenMs: 10 });
    const back = Date.now();
    await expect(app.getByTestId(`model-health-${slug(MODEL)}`)).toHaveText('healthy', { timeout: HEALTH_INTERVAL_MS + SLACK_MS });
    const healthyAfter = Date.now() - back;
    expect(await stack.chat(MODEL, 4)).toContain('[simulated]');
    await expect(app.getByTestId('engine-row').filter({ hasText: `127.0.0.1:${port}` })).toContainText('reachable');
    test.info().annotations.push({ type: 'healthy again after', description: `${healthyAfter} ms (interval ${HEALTH_INTERVAL_MS} ms)` });
  } finally {
    await engine?.close();
  }
});
