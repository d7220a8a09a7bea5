// The Grafana dashboard in grafana/ reads only what the agent exports: every metric name in every query
// (panels and template variables) is a family the agent's metrics text has, read from a real collector
// with every kind of event fed. The e2e fleet spec also runs every query against a real Prometheus.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AgentMetrics } from '../../../src/core/metrics/agent-metrics';
import { M } from '../../../src/core/metrics/metric-names';
import { DASHBOARD_FILE, dashboardQueries, metricNames, PROMETHEUS_OWN } from '../../support/metrics-dashboard';

/** The series names in an exposition text. */
async function exportedNames(): Promise<Set<string>> {
  const m = new AgentMetrics({
    nodeId: 'n',
    nodeName: () => 'rig',
    version: '1',
    link: () => ({ state: 'connected', hubUrl: 'ws://h', since: 0, attempts: 0 }),
    pause: () => ({ paused: false }),
    models: () => [{ id: 'm', enabled: true, health: 'healthy', inFlight: 0, queued: 0 }],
    gpuName: () => 'GPU',
    knownModel: () => true,
  });
  const record = {
    requestId: 'r',
    source: 'hub' as const,
    model: 'm',
    endpoint: '',
    startedAt: 0,
    finishedAt: 1,
    tokensIn: 1,
    tokensOut: 1,
    estimated: false,
    latencyMs: 1,
    ttftMs: 1,
    tokensPerSecond: 1,
  };
  m.onFinished({ ...record, status: 'ok', statusCode: 200, error: null }, { startedAt: 0, admittedAt: 0 }, 1);
  m.onFinished({ ...record, status: 'error', statusCode: 500, error: 'x' }, { startedAt: 0 }, 0);
  m.onSample({
    ts: 0,
    available: true,
    devices: [{ index: 0, utilization: 0.5, vramUsedMb: 1, vramTotalMb: 2, temperatureC: 50, powerW: 100, powerLimitW: 200, fanPercent: null }],
    cpuPercent: null,
    ramUsedMb: null,
    ramTotalMb: null,
  });
  m.onRegistered();
  m.onDisconnected('CLOSED');
  const names = new Set<string>();
  for (const line of (await m.text()).split('\n')) {
    const name = /^([a-zA-Z_:][a-zA-Z0-9_:]*)[{ ]/.exec(line)?.[1];
    if (name && !line.startsWith('#')) names.add(name);
  }
  return names;
}

describe('grafana/swan-provider-fleet.json', () => {
  const dash = JSON.parse(fs.readFileSync(DASHBOARD_FILE, 'utf8')) as {
    uid: string;
    title: string;
    __inputs: Array<{ name: string; pluginId: string }>;
    templating: { list: Array<{ name: string }> };
    panels: Array<{
      type: string;
      title: string;
      datasource?: { uid: string };
      targets?: Array<{ expr: string; datasource: { uid: string } }>;
      panels?: unknown[];
    }>;
  };
  const queries = dashboardQueries(dash);

  it('every query names only metrics the agent exports', async () => {
    const exported = await exportedNames();
    expect(queries.length).toBeGreaterThan(25);
    for (const q of queries) {
      const names = metricNames(q);
      expect(names.length, q).toBeGreaterThan(0);
      for (const n of names) expect(exported.has(n) || PROMETHEUS_OWN.has(n), `${n} in: ${q}`).toBe(true);
    }
  });

  it("reads the agent's key families: requests, errors, time to first token, tokens, earnings, GPUs, link", () => {
    const used = new Set(queries.flatMap(metricNames).map((n) => n.replace(/_(bucket|sum|count)$/, '')));
    for (const family of [M.requests, M.engineErrors, M.ttft, M.latency, M.tokens, M.earnings, M.gpuTemp, M.gpuUtil, M.linkState, M.connected, M.info])
      expect(used, family).toContain(family);
  });

  it('is importable: a datasource input, the rig and model variables, every target on that datasource', () => {
    expect(dash.uid).toBe('swan-provider-fleet');
    expect(dash.__inputs).toEqual([expect.objectContaining({ name: 'DS_PROMETHEUS', pluginId: 'prometheus' })]);
    expect(dash.templating.list.map((v) => v.name)).toEqual(['node', 'model']);
    const panels = dash.panels.filter((p) => p.type !== 'row');
    for (const p of panels) {
      expect(p.datasource?.uid, p.title).toBe('${DS_PROMETHEUS}');
      for (const t of p.targets ?? []) expect(t.datasource.uid, p.title).toBe('${DS_PROMETHEUS}');
    }
    expect(dash.panels.filter((p) => p.type === 'row').map((p) => p.title)).toEqual(['Fleet overview', 'Rig: $node', 'Per model']);
  });

  it('finds metric names the way PromQL reads them', () => {
    expect(
      metricNames('histogram_quantile(0.95, sum by (le, model) (rate(swan_time_to_first_token_seconds_bucket{model=~"$model"}[$__rate_interval])))'),
    ).toEqual(['swan_time_to_first_token_seconds_bucket']);
    expect(metricNames('sum(swan_model_health{health="healthy"} * on (node_id, model) swan_model_enabled)')).toEqual([
      'swan_model_health',
      'swan_model_enabled',
    ]);
    expect(metricNames('label_values(swan_requests_total{node_name=~"$node"}, model)')).toEqual(['swan_requests_total']);
  });
});
