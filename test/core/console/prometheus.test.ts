import { describe, expect, it } from 'vitest';
import { renderMetrics } from '../../../src/core/console/prometheus';
import type { AgentSnapshot } from '../../../src/shared/bridge';
import type { GpuSample } from '../../../src/shared/types';

const snapshot: AgentSnapshot = {
  version: '0.1.0',
  nodeId: 'ab12',
  nodeName: 'rig "one"\\west',
  link: { state: 'connected', hubUrl: 'ws://hub', since: 1, attempts: 0 },
  pause: { paused: false },
  gpu: {
    gpus: [{ index: 0, vendor: 'nvidia', model: 'NVIDIA GeForce RTX 3080', slug: 'rtx3080', vramTotalMb: 10240, sharedMemory: false, source: 'nvidia-smi' }],
    detectedAt: 1,
  },
  engines: [{ url: 'http://127.0.0.1:8000', type: 'vllm', models: ['llama'], reachable: true, origin: 'probe' }],
  models: [{ id: 'llama\n3', enabled: true, health: 'degraded', endpoints: [], inFlight: 2, queued: 1, maxConcurrent: 4, maxQueue: 16 }],
  today: { requests: 10, errors: 1, tokensIn: 100, tokensOut: 2000, earnings: 0.25 },
  gateway: { enabled: true, listen: '127.0.0.1:8787', running: true, keys: 2 },
  hasKey: true,
  onboarded: true,
};

const sample: GpuSample = {
  ts: 1,
  available: true,
  devices: [{ index: 0, utilization: 0.5, vramUsedMb: 1024, vramTotalMb: 10240, temperatureC: 61, powerW: 220.5, powerLimitW: 320, fanPercent: null }],
  cpuPercent: 25,
  ramUsedMb: 2048,
  ramTotalMb: 32768,
};

/** name{labels} value lines, parsed by a regex of the exposition format (independent of the writer). */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not exposition format: ${line}`);
    out.set(`${m[1]}${m[2] ?? ''}`, Number(m[3]));
  }
  return out;
}

describe('renderMetrics', () => {
  it('writes HELP and TYPE once per family and one line per sample', () => {
    const text = renderMetrics(snapshot, sample);
    expect(text.endsWith('\n')).toBe(true);
    const types = text.split('\n').filter((l) => l.startsWith('# TYPE '));
    expect(new Set(types).size).toBe(types.length);
    const s = samples(text);
    expect(s.get('swan_hub_connected')).toBe(1);
    expect(s.get('swan_hub_link_state{state="connected"}')).toBe(1);
    expect(s.get('swan_hub_link_state{state="backoff"}')).toBe(0);
    expect(s.get('swan_serving_paused')).toBe(0);
    expect(s.get('swan_today_tokens_out')).toBe(2000);
    expect(s.get('swan_today_earnings')).toBe(0.25);
    expect(s.get('swan_gpu_utilization_ratio{gpu="0",name="NVIDIA GeForce RTX 3080"}')).toBe(0.5);
    expect(s.get('swan_gpu_memory_used_bytes{gpu="0",name="NVIDIA GeForce RTX 3080"}')).toBe(1024 * 1024 * 1024);
    expect(s.get('swan_gpu_power_watts{gpu="0",name="NVIDIA GeForce RTX 3080"}')).toBe(220.5);
    expect(s.get('swan_host_cpu_ratio')).toBe(0.25);
    // a null reading is left out, not written as 0
    expect([...s.keys()].some((k) => k.startsWith('swan_gpu_fan_ratio'))).toBe(false);
  });

  it('escapes quotes, backslashes and newlines in label values', () => {
    const text = renderMetrics(snapshot, null);
    expect(text).toContain('node_name="rig \\"one\\"\\\\west"');
    expect(text).toContain('swan_model_in_flight{model="llama\\n3"} 2');
    expect(text).toContain('swan_model_health{model="llama\\n3",health="degraded"} 1');
    expect(text).not.toContain('swan_gpu_utilization_ratio');
    samples(text);
  });

  it('reports unavailable GPU metrics', () => {
    const text = renderMetrics(snapshot, { ...sample, available: false, devices: [] });
    expect(samples(text).get('swan_gpu_metrics_available')).toBe(0);
  });
});
