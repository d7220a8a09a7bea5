// The agent's Prometheus metrics, fed the way the agent feeds them (finished records, GPU samples, link
// events) and read back as exposition text, parsed here by a regex of the format (independent of the
// writer) and, where Debian's promtool is installed, linted by Prometheus' own checker.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AgentMetrics, engineErrorKind, MAX_MODELS, type MetricsSources } from '../../../src/core/metrics/agent-metrics';
import type { GpuSample, LinkStatus, UsageRecord } from '../../../src/shared/types';

/** name{labels} -> value, labels sorted by name so lookups do not depend on the writer's order. */
export function parseExposition(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not exposition format: ${line}`);
    const labels = [...(m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((l) => `${l[1]}="${l[2]}"`).sort();
    out.set(`${m[1]}{${labels.join(',')}}`, Number(m[3]));
  }
  return out;
}

/** The value of `name` whose labels include every one of `want`, summed over the matching series. */
function value(samples: Map<string, number>, name: string, want: Record<string, string> = {}): number | undefined {
  let sum: number | undefined;
  for (const [k, v] of samples) {
    const brace = k.indexOf('{');
    if (k.slice(0, brace) !== name) continue;
    if (!Object.entries(want).every(([l, x]) => k.includes(`${l}="${x}"`))) continue;
    sum = (sum ?? 0) + v;
  }
  return sum;
}

function record(p: Partial<UsageRecord> = {}): UsageRecord {
  return {
    requestId: 'r-1',
    source: 'hub',
    model: 'llama',
    endpoint: 'http://127.0.0.1:8000',
    startedAt: 1000,
    finishedAt: 3000,
    tokensIn: 12,
    tokensOut: 40,
    estimated: false,
    latencyMs: 2000,
    ttftMs: 300,
    tokensPerSecond: 25,
    status: 'ok',
    statusCode: 200,
    error: null,
    ...p,
  };
}

function setup(extra: Partial<MetricsSources> = {}) {
  let name = 'rig-one';
  let link: LinkStatus = { state: 'connected', hubUrl: 'ws://hub', since: 1, attempts: 0 };
  const known = new Set(['llama', 'qwen']);
  const m = new AgentMetrics({
    nodeId: 'node-abc',
    nodeName: () => name,
    version: '9.9.9',
    link: () => link,
    pause: () => ({ paused: false }),
    models: () => [
      { id: 'llama', enabled: true, health: 'healthy', inFlight: 2, queued: 1 },
      { id: 'qwen', enabled: false, health: 'unhealthy', inFlight: 0, queued: 0 },
    ],
    gpuName: (i) => (i === 0 ? 'NVIDIA GeForce RTX 4090' : undefined),
    knownModel: (model) => known.has(model),
    processMetrics: false,
    now: () => 61_000,
    ...extra,
  });
  return {
    m,
    known,
    rename: (n: string) => (name = n),
    setLink: (l: LinkStatus) => (link = l),
    read: async () => parseExposition(await m.text()),
  };
}

describe('AgentMetrics', () => {
  it('counts requests by source, model and outcome, tokens by direction, earnings and engine errors by kind', async () => {
    const { m, read } = setup();
    m.onFinished(record(), { startedAt: 1000, admittedAt: 1004 }, 0.0125);
    m.onFinished(record({ requestId: 'r-2', source: 'local', tokensIn: 5, tokensOut: 7 }), { startedAt: 1000, admittedAt: 1001, purpose: 'gateway' }, 0);
    m.onFinished(record({ requestId: 'warmup-1', source: 'local', tokensIn: 1, tokensOut: 1 }), { startedAt: 1000, purpose: 'warmup' }, 0);
    m.onFinished(
      record({ requestId: 'r-3', status: 'error', statusCode: 504, error: 'engine timed out', tokensIn: 0, tokensOut: 0, ttftMs: null }),
      { startedAt: 1000 },
      0,
    );
    m.onFinished(record({ requestId: 'r-4', status: 'rejected', statusCode: 429, error: 'queue full', tokensIn: 0, tokensOut: 0 }), { startedAt: 1000 }, 0);
    const s = await read();
    expect(value(s, 'swan_requests_total', { source: 'hub', model: 'llama', outcome: 'ok' })).toBe(1);
    expect(value(s, 'swan_requests_total', { source: 'local', model: 'llama', outcome: 'ok' })).toBe(1);
    expect(value(s, 'swan_requests_total', { source: 'internal', model: 'llama', outcome: 'ok' })).toBe(1);
    expect(value(s, 'swan_requests_total', { outcome: 'error' })).toBe(1);
    expect(value(s, 'swan_requests_total', { outcome: 'rejected' })).toBe(1);
    expect(value(s, 'swan_tokens_total', { source: 'hub', direction: 'in' })).toBe(12);
    expect(value(s, 'swan_tokens_total', { source: 'hub', direction: 'out' })).toBe(40);
    expect(value(s, 'swan_tokens_total', { direction: 'out' })).toBe(48);
    expect(value(s, 'swan_earnings_usd_total', { model: 'llama' })).toBe(0.0125);
    expect(value(s, 'swan_engine_errors_total', { model: 'llama', kind: 'timeout' })).toBe(1);
    // A refusal by the scheduler is not the engine's fault.
    expect(value(s, 'swan_engine_errors_total')).toBe(1);
  });

  it('times only served requests: latency, time to first token, speed and what the agent added before the engine', async () => {
    const { m, read } = setup();
    m.onFinished(record(), { startedAt: 1000, admittedAt: 1004 }, 0);
    m.onFinished(record({ requestId: 'r-2', latencyMs: 8000, ttftMs: 2500, tokensPerSecond: 4 }), { startedAt: 1000, admittedAt: 1300 }, 0);
    m.onFinished(record({ requestId: 'r-3', status: 'cancelled', latencyMs: 60_000 }), { startedAt: 1000, admittedAt: 1001 }, 0);
    const s = await read();
    const hub = { source: 'hub', model: 'llama' };
    expect(value(s, 'swan_request_duration_seconds_count', hub)).toBe(2);
    expect(value(s, 'swan_request_duration_seconds_sum', hub)).toBe(10);
    expect(value(s, 'swan_request_duration_seconds_bucket', { ...hub, le: '2' })).toBe(1);
    expect(value(s, 'swan_request_duration_seconds_bucket', { ...hub, le: '10' })).toBe(2);
    expect(value(s, 'swan_time_to_first_token_seconds_bucket', { ...hub, le: '0.5' })).toBe(1);
    expect(value(s, 'swan_time_to_first_token_seconds_bucket', { ...hub, le: '3' })).toBe(2);
    expect(value(s, 'swan_tokens_per_second_bucket', { ...hub, le: '5' })).toBe(1);
    expect(value(s, 'swan_relay_added_latency_seconds_bucket', { ...hub, le: '0.005' })).toBe(1);
    expect(value(s, 'swan_relay_added_latency_seconds_sum', hub)).toBeCloseTo(0.304, 6);
  });

  it('labels only known models, at most MAX_MODELS of them; anything else is "other"', async () => {
    const { m, known, read } = setup();
    m.onFinished(record({ model: 'not-ours' }), { startedAt: 0 }, 0);
    for (let i = 0; i < MAX_MODELS + 5; i++) known.add(`m${i}`);
    for (let i = 0; i < MAX_MODELS + 5; i++) m.onFinished(record({ model: `m${i}` }), { startedAt: 0 }, 0);
    const s = await read();
    const models = new Set([...s.keys()].filter((k) => k.startsWith('swan_requests_total{')).map((k) => /model="([^"]*)"/.exec(k)?.[1]));
    expect(models.has('not-ours')).toBe(false);
    expect(models.has('other')).toBe(true);
    expect(models.size).toBeLessThanOrEqual(MAX_MODELS + 1);
    // No request id anywhere.
    expect([...s.keys()].some((k) => k.includes('r-1'))).toBe(false);
  });

  it('starts the series of every known model at zero, so the first requests show in a rate', async () => {
    const { read } = setup();
    const s = await read();
    expect(value(s, 'swan_requests_total', { source: 'hub', model: 'qwen', outcome: 'ok' })).toBe(0);
    expect(value(s, 'swan_request_duration_seconds_bucket', { source: 'hub', model: 'qwen', le: '+Inf' })).toBe(0);
  });

  it('seeds every outcome of every source and every engine-error kind at zero (docs/monitoring.md, issue 40)', async () => {
    const { read } = setup();
    const s = await read();
    for (const source of ['hub', 'local', 'internal']) {
      for (const outcome of ['ok', 'error', 'cancelled', 'rejected'])
        expect(value(s, 'swan_requests_total', { source, model: 'qwen', outcome }), `${source} ${outcome}`).toBe(0);
    }
    for (const kind of ['key_rejected', 'timeout', 'connection', 'engine_4xx', 'engine_5xx', 'other'])
      expect(value(s, 'swan_engine_errors_total', { model: 'qwen', kind }), kind).toBe(0);
  });

  it('reads link, pause, models and uptime when scraped, and GPUs from the last sample', async () => {
    const { m, setLink, read } = setup();
    const sample: GpuSample = {
      ts: 1,
      available: true,
      devices: [{ index: 0, utilization: 0.75, vramUsedMb: 1024, vramTotalMb: 24564, temperatureC: 66, powerW: 310.5, powerLimitW: 450, fanPercent: 40 }],
      cpuPercent: 10,
      ramUsedMb: 1,
      ramTotalMb: 2,
    };
    m.onSample(sample);
    let s = await read();
    expect(value(s, 'swan_hub_connected')).toBe(1);
    expect(value(s, 'swan_hub_link_state', { state: 'connected' })).toBe(1);
    expect(value(s, 'swan_hub_link_state')).toBe(1);
    expect(value(s, 'swan_serving_paused')).toBe(0);
    expect(value(s, 'swan_uptime_seconds')).toBe(0);
    expect(value(s, 'swan_in_flight_requests', { model: 'llama' })).toBe(2);
    expect(value(s, 'swan_queued_requests', { model: 'llama' })).toBe(1);
    expect(value(s, 'swan_model_enabled', { model: 'qwen' })).toBe(0);
    expect(value(s, 'swan_model_health', { model: 'qwen', health: 'unhealthy' })).toBe(1);
    expect(value(s, 'swan_model_health', { model: 'qwen', health: 'healthy' })).toBe(0);
    const gpu = { gpu: '0', gpu_name: 'NVIDIA GeForce RTX 4090' };
    expect(value(s, 'swan_gpu_utilization_ratio', gpu)).toBe(0.75);
    expect(value(s, 'swan_gpu_memory_used_bytes', gpu)).toBe(1024 * 1024 * 1024);
    expect(value(s, 'swan_gpu_temperature_celsius', gpu)).toBe(66);
    expect(value(s, 'swan_gpu_power_watts', gpu)).toBe(310.5);
    expect(value(s, 'swan_gpu_metrics_available')).toBe(1);

    setLink({ state: 'backoff', hubUrl: 'ws://hub', since: 2, attempts: 3 });
    m.onSample({ ...sample, available: false, devices: [] });
    s = await read();
    expect(value(s, 'swan_hub_connected')).toBe(0);
    expect(value(s, 'swan_hub_link_state', { state: 'backoff' })).toBe(1);
    expect(value(s, 'swan_gpu_metrics_available')).toBe(0);
    expect(value(s, 'swan_gpu_temperature_celsius')).toBeUndefined();
  });

  it('counts reconnects (every registration after the first) and disconnects by code', async () => {
    const { m, read } = setup();
    m.onRegistered();
    m.onDisconnected('READ_DEADLINE');
    m.onRegistered();
    m.onDisconnected('UNREACHABLE');
    m.onDisconnected('UNREACHABLE');
    m.onRegistered();
    const s = await read();
    expect(value(s, 'swan_hub_reconnects_total')).toBe(2);
    expect(value(s, 'swan_hub_disconnects_total', { code: 'UNREACHABLE' })).toBe(2);
  });

  it('labels every series with the node id and the node name as it is now', async () => {
    const { rename, read } = setup();
    let s = await read();
    for (const k of s.keys()) expect(k).toContain('node_id="node-abc"');
    expect(value(s, 'swan_info', { version: '9.9.9', node_name: 'rig-one' })).toBe(1);
    rename('rig "two"');
    s = await read();
    expect(value(s, 'swan_info', { node_name: 'rig \\"two\\"' })).toBe(1);
  });

  it("passes promtool check metrics (Prometheus' own linter)", async (ctx) => {
    if (!fs.existsSync('/usr/bin/promtool')) return ctx.skip('promtool is not installed (Debian package prometheus)');
    const { m } = setup({ processMetrics: true });
    m.onFinished(record(), { startedAt: 1000, admittedAt: 1004 }, 0.01);
    m.onFinished(record({ requestId: 'r-2', status: 'error', statusCode: 500, error: 'x' }), { startedAt: 1000 }, 0);
    const text = await m.text();
    expect(text).toContain('process_cpu_seconds_total');
    const r = spawnSync('/usr/bin/promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    // prom-client's own nodejs_active_*_total gauges draw a naming remark; the agent's families draw none.
    const remarks = (r.stdout + r.stderr).split('\n').filter((l) => l.trim() && !l.startsWith('nodejs_'));
    expect(remarks).toEqual([]);
  });
});

describe('engineErrorKind', () => {
  it('sorts failures into a small fixed set', () => {
    expect(engineErrorKind({ statusCode: 502, error: "engine rejected the provider's key" })).toBe('key_rejected');
    expect(engineErrorKind({ statusCode: 504, error: 'x' })).toBe('timeout');
    expect(engineErrorKind({ statusCode: 502, error: 'engine request failed: connect ECONNREFUSED 127.0.0.1:8000' })).toBe('connection');
    expect(engineErrorKind({ statusCode: 400, error: 'bad prompt' })).toBe('engine_4xx');
    expect(engineErrorKind({ statusCode: 500, error: 'CUDA out of memory' })).toBe('engine_5xx');
    expect(engineErrorKind({ statusCode: null, error: null })).toBe('other');
  });
});
