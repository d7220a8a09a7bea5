// First-run edges in the console and on the command line: Add endpoint and Rescan with discovery off
// (the stack runs the agent with --no-discovery), and a busy console port.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startSimulatedEngine } from '../src/cli/sim-engine';
import { expect, go, slug, test } from './support/fixtures';
import { repoRoot } from './support/stack';

test('Add endpoint with discovery off: the engine is probed, shown with its type, and its models appear; Rescan says what it probed; Remove takes it away', async ({
  app,
  stack,
}) => {
  const extra = await startSimulatedEngine({ host: '127.0.0.1', models: ['extra/model-7b'] });
  try {
    await go(app, 'engines');
    await app.getByTestId('rescan-button').click();
    await expect(app.getByTestId('rescan-result')).toHaveText(
      'Discovery is off, so only the addresses you added and models.json were probed: 1 engine(s) answered.',
    );
    await app.getByTestId('endpoint-url').fill(`${extra.url}/v1`);
    await app.getByTestId('endpoint-model').fill('extra/model-7b');
    await app.getByTestId('endpoint-add').click();
    await expect(app.getByTestId('endpoint-result')).toContainText(`Added ${extra.url}:`);
    await expect(app.getByTestId('endpoint-result')).toContainText('with 1 model(s)');
    const row = app.getByTestId('engine-row').filter({ hasText: extra.url });
    await expect(row).toContainText('added by you');
    await expect(row).toContainText('reachable');
    await expect(app.getByTestId(`model-row-${slug('extra/model-7b')}`)).toHaveAttribute('data-enabled', 'true');

    await app.getByTestId('endpoint-url').fill('http://127.0.0.1:9');
    await app.getByTestId('endpoint-add').click();
    await expect(app.getByTestId('endpoint-result')).toContainText('but no engine answers there yet');

    // Removed where it was added: the engine and its model leave; the models.json engine has no Remove.
    await row.getByTestId('engine-remove').click();
    await expect(app.getByTestId('engine-row').filter({ hasText: extra.url })).toHaveCount(0);
    await expect(app.getByTestId(`model-row-${slug('extra/model-7b')}`)).toHaveCount(0);
    await expect(app.getByTestId('engine-row').filter({ hasText: stack.engine.url }).getByTestId('engine-remove')).toHaveCount(0);
    await expect.poll(async () => (await stack.provider())?.models).not.toContain('extra/model-7b');
  } finally {
    await extra.close();
  }
});

test('a busy console port: one line with the fix and exit code 2, nothing started', async () => {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as net.AddressInfo).port;
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-e2e-busy-'));
  try {
    const r = spawnSync(
      process.execPath,
      [path.join(repoRoot, 'bin', 'swan-provider.js'), 'run', '--home', home, '--init-if-missing', '--console', `127.0.0.1:${port}`],
      { encoding: 'utf8', timeout: 30_000 },
    );
    expect(r.status).toBe(2);
    expect(r.stderr.trim()).toBe(
      `The console address 127.0.0.1:${port} is already in use (another swan-provider, or another program, listens there). Start with another one: --console 127.0.0.1:${port + 1}`,
    );
    expect(fs.readdirSync(home)).toEqual([]);
  } finally {
    srv.close();
    fs.rmSync(home, { recursive: true, force: true });
  }
});
