// The names of the agent's own metric families, in one place: the collector (agent-metrics.ts), the
// docs (docs/monitoring.md) and the Grafana dashboard's check (test/core/metrics/grafana-dashboard.test.ts)
// read them from here. Renaming one breaks every owner's dashboard and alert rules: add, never rename.
export const M = {
  // counters
  requests: 'swan_requests_total',
  tokens: 'swan_tokens_total',
  earnings: 'swan_earnings_usd_total',
  engineErrors: 'swan_engine_errors_total',
  reconnects: 'swan_hub_reconnects_total',
  disconnects: 'swan_hub_disconnects_total',
  // histograms
  ttft: 'swan_time_to_first_token_seconds',
  latency: 'swan_request_duration_seconds',
  speed: 'swan_tokens_per_second',
  added: 'swan_relay_added_latency_seconds',
  // gauges
  info: 'swan_info',
  uptime: 'swan_uptime_seconds',
  connected: 'swan_hub_connected',
  linkState: 'swan_hub_link_state',
  paused: 'swan_serving_paused',
  modelEnabled: 'swan_model_enabled',
  modelHealth: 'swan_model_health',
  inFlight: 'swan_in_flight_requests',
  queued: 'swan_queued_requests',
  gpuAvailable: 'swan_gpu_metrics_available',
  gpuUtil: 'swan_gpu_utilization_ratio',
  gpuVramUsed: 'swan_gpu_memory_used_bytes',
  gpuVramTotal: 'swan_gpu_memory_total_bytes',
  gpuTemp: 'swan_gpu_temperature_celsius',
  gpuPower: 'swan_gpu_power_watts',
  gpuPowerLimit: 'swan_gpu_power_limit_watts',
} as const;

export type MetricName = (typeof M)[keyof typeof M];
