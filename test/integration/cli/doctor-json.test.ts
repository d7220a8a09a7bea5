// `doctor --json` (issue 40): the verdict with its stable codes, every check and the exit code; exit 0 only
// when the models served are answering, routed and priced as far as can be known. A catalogue that answers
// 404 makes routing unknown (never "All good"); a ServiceURL that is an engine, not a Swan hub, is said so.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startDevHub } from '../../../src/cli/dev-hub';
import type { DoctorReport } from '../../../src/cli/doctor';
import { startTestEngine } from '../../support/engine-server';
import { PlatformApi } from '../../support/platform-api';
import { KeyDestinations } from '../../../src/core/config/key-destinations';
import { SettingsFile } from '../../../src/core/config/settings-file';
import { freePort, TEST_KEY, tempHome } from '../../support/stack';
import { writeConfigToml } from '../../support/config-toml';
import { Llama, LLAMA_PRESENT, runCli } from '../../support/live/llama';
import { repoRoot } from '../../support/traces';

const NO_GO_KEY = path.join(repoRoot, 'no-go-provider-here');
const MODEL = 'simulated-llama-3.1-8b-instruct';
const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

async function setup(serviceUrl: (hubUrl: string) => string): Promise<{ home: string; hubUrl: string }> {
  const engine = await startTestEngine({ models: [MODEL] });
  cleanup.push(() => engine.close());
  const hub = await startDevHub({ token: TEST_KEY, earningsEnabled: true });
  cleanup.push(() => hub.close());
  const home = tempHome();
  cleanup.push(() => fs.rmSync(home, { recursive: true, force: true }));
  fs.writeFileSync(path.join(home, 'models.json'), JSON.stringify({ [MODEL]: { endpoint: `${engine.url}/v1` } }));
  writeConfigToml(home, {
    API: { NodeName: 'doctor-node' },
    Inference: { WebSocketURL: hub.wsUrl, ServiceURL: serviceUrl(hub.url), ApiKey: TEST_KEY },
    Agent: { Discovery: false },
  });
  return { home, hubUrl: hub.url };
}

async function doctorJson(home: string): Promise<{ code: number | null; report: DoctorReport }> {
  const r = await runCli(['doctor', '--home', home, '--json'], { CP_PATH: NO_GO_KEY });
  return { code: r.code, report: JSON.parse(r.out) as DoctorReport };
}

describe('doctor --json', () => {
  it('serving, routed and priced: the verdict serving with no codes, exit 0', async () => {
    const { home } = await setup((hub) => hub);
    const { code, report } = await doctorJson(home);
    expect(report.verdict).toMatchObject({ state: 'serving', codes: [], routable: [MODEL] });
    expect(report.exit).toBe(0);
    expect(code).toBe(0);
  });

  it('a key held for an address its owner has not approved: said with key_destination_held, and never sent from doctor', async () => {
    const { home, hubUrl } = await setup((hub) => hub);
    const elsewhere = await PlatformApi.start(TEST_KEY);
    cleanup.push(() => elsewhere.close());
    // The approvals the agent keeps (config.toml's own hosts), then the console's platform address moved.
    new KeyDestinations(home).seed(TEST_KEY, [new URL(hubUrl).host]);
    SettingsFile.in(home).update((st) => ({ ...st, serviceUrl: elsewhere.url }));
    const { code, report } = await doctorJson(home);
    expect(report.checks.find((c) => c.what.includes('(key_destination_held)'))).toMatchObject({ ok: false });
    expect(elsewhere.hits.filter((h) => h.auth?.includes(TEST_KEY))).toEqual([]);
    expect(code).not.toBe(0);
  });

  it('a catalogue that answers 404: routing_unknown, exit 1, and no "All good" in words either', async () => {
    const api = await PlatformApi.start(TEST_KEY);
    cleanup.push(() => api.close());
    api.routes['/api/v1/stats/model-demand'] = { kind: 'json', body: { code: 0, data: { models: [{ model_id: MODEL, input_price: 0.5, output_price: 2 }] } } };
    const { home } = await setup(() => api.url);
    const { code, report } = await doctorJson(home);
    expect(report.verdict?.state).toBe('unknown');
    expect(report.verdict?.codes).toEqual(['routing_unknown']);
    expect(code).toBe(1);
    const words = await runCli(['doctor', '--home', home], { CP_PATH: NO_GO_KEY });
    expect(words.code).toBe(1);
    expect(words.out).not.toContain('All good');
    expect(words.out).toContain('HTTP 404');
  });

  it('a catalogue that lists the model but a price list without it: not_priced, exit 1', async () => {
    const api = await PlatformApi.start(TEST_KEY);
    cleanup.push(() => api.close());
    api.routes['/api/v1/models'] = { kind: 'json', body: { code: 0, data: { list: [{ id: MODEL, name: MODEL, active: true }] } } };
    const { home } = await setup(() => api.url);
    const { code, report } = await doctorJson(home);
    expect(report.verdict).toMatchObject({ state: 'not_earning', codes: ['not_priced'] });
    expect(code).toBe(1);
  });

  it.skipIf(!LLAMA_PRESENT)(
    'a ServiceURL that is a real llama-server: not a Swan hub, routing and pay unknown, exit 1',
    async () => {
      const llama = new Llama(await freePort(), ['-np', '1']);
      await llama.start();
      cleanup.push(() => llama.kill());
      const { home } = await setup(() => llama.url);
      const { code, report } = await doctorJson(home);
      const status = report.checks.find((c) => c.what.includes('/api/v1/provider/status'));
      expect(status).toMatchObject({ ok: false });
      expect(status?.what).toContain('does not answer like a Swan hub (HTTP 404)');
      expect(report.checks.some((c) => /can connect/.test(c.what))).toBe(false);
      expect(report.verdict?.codes).toContain('routing_unknown');
      expect(code).toBe(1);
    },
    60_000,
  );
});
