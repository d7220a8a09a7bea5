// Prometheus text exposition (format 0.0.4) of the agent's state, for owners who watch rigs in Grafana.
// Everything is a gauge: "today" totals reset at midnight, so they are not counters.
import type { AgentSnapshot } from '../../shared/bridge';
import type { GpuSample } from '../../shared/types';

type Labels = Record<string, string | number>;

interface Family {
  name: string;
  help: string;
  rows: { labels: Labels; value: number }[];
}

function escapeLabel(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function escapeHelp(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

function formatLabels(labels: Labels): string {
  const keys = Object.keys(labels);
  if (keys.length === 0) return '';
  return `{${keys.map((k) => `${k}="${escapeLabel(String(labels[k]))}"`).join(',')}}`;
}

function render(families: Family[]): string {
  const out: string[] = [];
  for (const f of families) {
    if (f.rows.length === 0) continue;
    out.push(`# HELP ${f.name} ${escapeHelp(f.help)}`, `# TYPE ${f.name} gauge`);
    for (const r of f.rows) out.push(`${f.name}${formatLabels(r.labels)} ${formatValue(r.value)}`);
  }
  return out.join('\n') + '\n';
}

const LINK_STATES = ['idle', 'connecting', 'registering', 'connected', 'backoff', 'auth_failed', 'stopped'] as const;
const HEALTH = ['healthy', 'degraded', 'unhealthy'] as const;

export function renderMetrics(snapshot: AgentSnapshot, sample: GpuSample | null): string {
  const fam = (name: string, help: string, rows: Family['rows'] = []): Family => ({ name, help, rows });
  const one = (value: number, labels: Labels = {}) => ({ labels, value });

  const families: Family[] = [
    fam('swan_provider_info', 'Agent version and identity (value is always 1).', [
      one(1, { version: snapshot.version, node_id: snapshot.nodeId, node_name: snapshot.nodeName }),
    ]),
    fam('swan_hub_connected', '1 when registered with the hub and serving.', [one(snapshot.link.state === 'connected' ? 1 : 0)]),
    fam(
      'swan_hub_link_state',
      'Hub link state: 1 for the current state, 0 for the others.',
      LINK_STATES.map((s) => one(snapshot.link.state === s ? 1 : 0, { state: s })),
    ),
    fam('swan_hub_reconnect_attempts', 'Dials since the last successful register.', [one(snapshot.link.attempts)]),
    fam('swan_serving_paused', '1 when serving is paused (by the owner, a busy GPU or a schedule).', [one(snapshot.pause.paused ? 1 : 0)]),
    fam('swan_model_enabled', '1 when the model is offered to the network.', snapshot.models.map((m) => one(m.enabled ? 1 : 0, { model: m.id }))),
    fam(
      'swan_model_health',
      'Model health: 1 for the current health, 0 for the others.',
      snapshot.models.flatMap((m) => HEALTH.map((h) => one(m.health === h ? 1 : 0, { model: m.id, health: h }))),
    ),
    fam('swan_model_in_flight', 'Requests running on the model now.', snapshot.models.map((m) => one(m.inFlight, { model: m.id }))),
    fam('swan_model_queued', 'Requests waiting for the model.', snapshot.models.map((m) => one(m.queued, { model: m.id }))),
    fam('swan_model_max_concurrent', 'Concurrency limit of the model.', snapshot.models.map((m) => one(m.maxConcurrent, { model: m.id }))),
    fam('swan_engine_reachable', '1 when the engine answered its last probe.', snapshot.engines.map((e) => one(e.reachable ? 1 : 0, { url: e.url, type: e.type }))),
    fam('swan_today_requests', 'Requests served today (resets at local midnight).', [one(snapshot.today.requests)]),
    fam('swan_today_errors', 'Failed requests today.', [one(snapshot.today.errors)]),
    fam('swan_today_tokens_in', 'Prompt tokens today.', [one(snapshot.today.tokensIn)]),
    fam('swan_today_tokens_out', 'Generated tokens today.', [one(snapshot.today.tokensOut)]),
    fam('swan_today_earnings', 'Earnings today in the price currency.', [one(snapshot.today.earnings)]),
    fam('swan_gateway_running', '1 when the local gateway is listening.', [one(snapshot.gateway.running ? 1 : 0)]),
    fam('swan_gateway_keys', 'Gateway API keys issued.', [one(snapshot.gateway.keys)]),
    fam('swan_gpu_count', 'GPUs detected.', [one(snapshot.gpu.gpus.length)]),
  ];

  if (sample) {
    const name = (index: number) => snapshot.gpu.gpus.find((g) => g.index === index)?.model ?? `gpu${index}`;
    const per = (metric: string, help: string, pick: (d: GpuSample['devices'][number]) => number | null) =>
      fam(
        metric,
        help,
        sample.devices.flatMap((d) => {
          const v = pick(d);
          return v === null ? [] : [one(v, { gpu: d.index, name: name(d.index) })];
        }),
      );
    families.push(
      fam('swan_gpu_metrics_available', '0 when the GPU tool is missing, hung or restarting.', [one(sample.available ? 1 : 0)]),
      per('swan_gpu_utilization_ratio', 'GPU utilisation, 0..1.', (d) => d.utilization),
      per('swan_gpu_memory_used_bytes', 'GPU memory in use.', (d) => (d.vramUsedMb === null ? null : d.vramUsedMb * 1024 * 1024)),
      per('swan_gpu_memory_total_bytes', 'GPU memory in total.', (d) => (d.vramTotalMb === null ? null : d.vramTotalMb * 1024 * 1024)),
      per('swan_gpu_temperature_celsius', 'GPU temperature.', (d) => d.temperatureC),
      per('swan_gpu_power_watts', 'GPU power draw.', (d) => d.powerW),
      per('swan_gpu_power_limit_watts', 'GPU power limit.', (d) => d.powerLimitW),
      per('swan_gpu_fan_ratio', 'GPU fan speed, 0..1.', (d) => (d.fanPercent === null ? null : d.fanPercent / 100)),
      fam('swan_host_cpu_ratio', 'Host CPU use, 0..1.', sample.cpuPercent === null ? [] : [one(sample.cpuPercent / 100)]),
      fam('swan_host_memory_used_bytes', 'Host memory in use.', sample.ramUsedMb === null ? [] : [one(sample.ramUsedMb * 1024 * 1024)]),
      fam('swan_host_memory_total_bytes', 'Host memory in total.', sample.ramTotalMb === null ? [] : [one(sample.ramTotalMb * 1024 * 1024)]),
    );
  }
  return render(families);
}
