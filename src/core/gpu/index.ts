// GPU detection, the hub's hardware block, live metrics and GPU processes.
export { detectGpus, DEFAULT_DETECT_TIMEOUT_MS, type DetectOptions } from './detect';
export { gpuSlug } from './slug';
export { hardwareBlock, type HubHardware } from './hardware';
export { GpuSampler, type GpuSamplerOptions, type SamplerMode } from './sampler';
export { heartbeatMetrics, type HeartbeatMetricsOptions } from './metrics';
export { listGpuProcesses, isEngineProcess, GpuToolError, type ListProcessesOptions } from './processes';
