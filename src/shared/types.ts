// Domain types shared by core, main, preload, renderer and the console transport.
// Plain data only: everything here must survive JSON (IPC and the browser console's WebSocket).

export type LinkState =
  | 'idle' // not started
  | 'connecting' // dialling the hub
  | 'registering' // socket open, waiting for the register ack
  | 'connected' // registered and serving
  | 'backoff' // waiting before the next dial
  | 'auth_failed' // the hub refused our key; long backoff until the key changes
  | 'stopped'; // stopped by the owner

/** Why the hub link is not connected, stable for tests and tools (the prose in `reason` may change). */
export type LinkReasonCode =
  | 'READ_DEADLINE' // the hub sent nothing for the read timeout
  | 'HEARTBEAT_UNACKED' // heartbeats went unacknowledged
  | 'REGISTER_TIMEOUT' // no register ack in time
  | 'REGISTER_REFUSED' // the hub refused registration
  | 'AUTH_FAILED' // the hub refused the provider key
  | 'WRITE_DEADLINE' // a write to the hub did not complete in time
  | 'UPGRADE_REFUSED' // an HTTP answer instead of a WebSocket upgrade
  | 'UNREACHABLE' // connection refused
  | 'MESSAGE_TOO_LARGE' // the hub sent a message over the 1 MB limit
  | 'SOCKET_ERROR' // another socket or network error
  | 'CLOSED'; // the connection closed (by the hub, or ours: stop, hub URL change)

export interface LinkStatus {
  state: LinkState;
  hubUrl: string;
  /** Plain-language reason when not connected (what happened, what to do). */
  reason?: string;
  /** The stable code of `reason`. */
  code?: LinkReasonCode;
  since: number; // epoch ms of the last state change
  nextRetryAt?: number; // epoch ms, in backoff / auth_failed
  attempts: number; // dials since the last successful register
}

export type ModelHealth = 'healthy' | 'degraded' | 'unhealthy';

export type GpuVendor = 'nvidia' | 'amd' | 'apple' | 'intel' | 'other';

export interface GpuInfo {
  index: number;
  vendor: GpuVendor;
  model: string; // "NVIDIA GeForce RTX 3080"
  slug: string; // "rtx3080"
  vramTotalMb: number;
  /** Apple Silicon and some iGPUs: VRAM is system memory shared with the CPU. */
  sharedMemory: boolean;
  driverVersion?: string;
  cudaVersion?: string;
  computeCapability?: string; // NVIDIA "8.6"
  busId?: string;
  uuid?: string;
  /** A MIG slice of a physical GPU: the parent's index and the profile name. */
  mig?: { parentIndex: number; profile: string };
  /** Which source won for this device: the vendor tool or systeminformation. */
  source: 'nvidia-smi' | 'amd-smi' | 'rocm-smi' | 'systeminformation';
}

export interface GpuInventory {
  gpus: GpuInfo[];
  /** Human text when no GPU is found or a tool failed ("nvidia-smi: Failed to initialize NVML …"). */
  note?: string;
  detectedAt: number;
}

export interface GpuDeviceSample {
  index: number;
  utilization: number | null; // 0..1
  vramUsedMb: number | null;
  vramTotalMb: number | null;
  temperatureC: number | null;
  powerW: number | null;
  powerLimitW: number | null;
  fanPercent: number | null;
}

export interface GpuSample {
  ts: number;
  /** false when the tool is missing, hung or restarting: the UI shows "metrics unavailable". */
  available: boolean;
  reason?: string;
  devices: GpuDeviceSample[];
  cpuPercent: number | null; // 0..100 host CPU
  ramUsedMb: number | null;
  ramTotalMb: number | null;
}

export interface GpuProcess {
  pid: number;
  name: string;
  gpuUuid?: string;
  usedMemoryMb: number | null;
  /** true when the process is one of our engines (matched by pid or name). */
  isEngine: boolean;
}

export type EngineType = 'vllm' | 'sglang' | 'ollama' | 'llamacpp' | 'lmstudio' | 'tgi' | 'jan' | 'openai' | 'unknown';

export interface EngineInfo {
  url: string; // base URL without /v1, e.g. http://127.0.0.1:8000
  type: EngineType;
  version?: string;
  models: string[];
  reachable: boolean;
  lastSeen?: number;
  /** How it was found: default-port probe, owner-added host, or models.json. */
  origin: 'probe' | 'owner' | 'config';
  error?: string;
  /** Answers 503 "Loading model" (llama-server while it loads): an engine, not ready yet. */
  loading?: boolean;
  /** What the engine says about each of its models (by the engine's own name), when it says anything. */
  modelMeta?: Record<string, EngineModelMeta>;
}

/**
 * What an engine reports about one of its models (llama.cpp /v1/models `meta`, Ollama /api/tags
 * `details`, LM Studio /api/v0/models): the evidence catalogue matching trusts beyond the exact id.
 */
export interface EngineModelMeta {
  /** The architecture family as the engine names it ("llama", "qwen2"). */
  family?: string;
  /** Parameter count (llama.cpp n_params; Ollama "8.0B" is 8.0e9). */
  parameters?: number;
  /** Quantization as the engine names it ("Q4_K_M", "all F32", "F16"). */
  quantization?: string;
}

/**
 * Why an endpoint (or, for not_served, one model at it) is not serving, beyond plain failures: the engine
 * is gone, refuses our key, is loading its model; the deep health check's one-token chat got no response,
 * an engine error, or a 404 for the model.
 */
export type EndpointCondition = 'down' | 'key_rejected' | 'loading' | 'no_response' | 'engine_error' | 'not_served';

/** The last deep health check of a model at an endpoint: a real one-token chat, by the engine's own name. */
export interface DeepCheckView {
  at: number;
  ok: boolean;
  /** Why it failed (stable): no_response, key_rejected, not_served, engine_error, loading. */
  code?: string;
  error?: string;
}

export interface EndpointState {
  url: string;
  engineType: EngineType;
  health: ModelHealth;
  inFlight: number;
  maxConcurrent: number;
  consecutiveFailures: number;
  lastError?: string;
  /** Why it is not serving, beyond plain failures: engine gone, key refused, model loading, deep check failed. */
  condition?: EndpointCondition;
  /** The last one-token chat to this model here; absent: not probed yet, or not a chat model. */
  deepCheck?: DeepCheckView;
  /** Not probed with chat: an embedding, image or audio model (its category in models.json). */
  deepCheckSkipped?: boolean;
  /** Where maxConcurrent comes from: "config", "llama.cpp /props total_slots", "default", … */
  capacitySource?: string;
  /** The engine's own name of the model when it differs from the announced id (a file path, an alias). */
  localModel?: string;
}

export interface ModelState {
  id: string; // the id announced to the hub
  enabled: boolean;
  health: ModelHealth; // best of its endpoints
  /** The last warmup failed (its stable code and why): the model reads degraded until a warmup passes. */
  warmupFailure?: { at: number; code: string; error: string };
  /** Withdrawn from the hub by self-healing (its probes or requests kept failing) until a real probe passes. */
  withdrawn?: { reason: 'probe_failures' | 'error_rate'; since: number; detail: string };
  endpoints: EndpointState[];
  inFlight: number;
  queued: number;
  maxConcurrent: number;
  maxQueue: number;
  /** What the engine reports contradicts the id it is announced under (src/core/models/mapping-check.ts). */
  mapping?: MappingCheckView;
  /** Held off the network because a GPU it runs on is paused (a rig with several GPUs: engines/gpu-placement.ts). */
  gpuHold?: { gpu: number; cause: GpuServingCause; placement: GpuPlacementSource };
  /** The GPUs it runs on, and who said so; absent on a rig with one GPU or none. */
  gpus?: { indexes: number[]; source: GpuPlacementSource };
}

/** One NVIDIA GPU's power limit as the driver enforces it, and the range it allows (W; null: not said). */
export interface GpuPowerLimitView {
  index: number;
  limitW: number | null;
  defaultW: number | null;
  minW: number | null;
  maxW: number | null;
}

/** Why one GPU of several is not serving: the owner gave it back, it is over a ceiling, or another program uses it. */
export type GpuServingCause = 'given_back' | 'gpu_hot' | 'gpu_busy' | 'schedule';

/** One GPU's part in serving, on a rig with more than one. */
export interface GpuServingState {
  index: number;
  serving: boolean;
  cause?: GpuServingCause;
  reason?: string;
  since?: number;
}

/**
 * Who says where a model runs: models.json's `gpus` (the owner), the engine this agent started (its --gpus),
 * the driver (the engine's listening process found in nvidia-smi's list), or nobody (unknown: the model is held
 * whenever any GPU is paused, since it may be on that one).
 */
export type GpuPlacementSource = 'owner' | 'managed' | 'driver' | 'unknown';

/** A mapping the engine's report contradicts: held back (not announced) until the owner confirms it. */
export interface MappingCheckView {
  /** mapping_unchecked: its engine has not reported yet (held for the moment, not a contradiction). */
  code: 'mapping_parameters_mismatch' | 'mapping_quantization_mismatch' | 'mapping_unchecked';
  /** The engine's own name for the model (its file, its tag). */
  engineModel: string;
  text: string;
  /** What was found, so a confirmation holds for this finding only (a new file is checked again). */
  signature: string;
  /** The owner confirmed it: announced anyway. */
  confirmed: boolean;
}

export interface PauseState {
  paused: boolean;
  /** manual | game (another process uses the GPU) | schedule */
  cause?: 'manual' | 'gpu_busy' | 'gpu_hot' | 'schedule';
  reason?: string;
  since?: number;
}

export type RequestSource = 'hub' | 'local';
/** Why the agent called an engine (src/core/inference/purpose.ts holds what each one means). */
export type RequestPurpose = 'hub' | 'gateway' | 'try' | 'warmup' | 'ollama-load' | 'verify' | 'benchmark' | 'health' | 'ollama-pull' | 'ollama-unload';
export type RequestStatus = 'queued' | 'running' | 'ok' | 'error' | 'cancelled' | 'rejected';

/** One request as the console shows it. */
export interface RequestView {
  id: string;
  source: RequestSource;
  /** What it was: paid hub traffic, the local gateway, the test prompt, a warmup, a verify or benchmark. */
  purpose?: RequestPurpose;
  model: string;
  endpoint?: string;
  status: RequestStatus;
  stream: boolean;
  startedAt: number;
  /** When the scheduler admitted it and the engine call began (absent while queued or when refused). */
  admittedAt?: number;
  firstTokenAt?: number;
  finishedAt?: number;
  tokensIn: number;
  tokensOut: number;
  /** true when the engine reported no usage and the counts are estimated. */
  estimated: boolean;
  latencyMs?: number;
  error?: string;
  statusCode?: number;
  /** What the ledger booked for it when it finished (USD, by the network's rates; 0 for local requests). */
  earnings?: number;
}

/** A finished request as the ledger stores it. */
export interface UsageRecord {
  requestId: string;
  source: RequestSource;
  model: string;
  endpoint: string;
  startedAt: number; // epoch ms
  finishedAt: number; // epoch ms
  tokensIn: number;
  tokensOut: number;
  estimated: boolean;
  latencyMs: number;
  ttftMs: number | null;
  tokensPerSecond: number | null;
  status: 'ok' | 'error' | 'cancelled' | 'rejected';
  statusCode: number | null;
  error: string | null;
  /** GPU energy attributed to this request (Wh); absent or null when no power samples covered it. */
  energyWh?: number | null;
  /** A hub request whose last message (stream_end / result) is about to be sent: stored as not yet
   * delivered until Ledger.markDelivered(). Absent: delivered (local requests, imports). */
  awaitingHub?: boolean;
}

export interface UsageTotals {
  requests: number;
  errors: number;
  tokensIn: number;
  tokensOut: number;
  earnings: number; // in the price currency (USD by default)
  /** GPU energy attributed to these requests (Wh) and its cost at the owner's electricity price (USD). */
  energyWh?: number;
  cost?: number;
}

export interface LogEntry {
  ts: number;
  level: 'debug' | 'info' | 'warn' | 'error';
  subsystem: string;
  msg: string;
  requestId?: string;
}

/**
 * The one answer to "is this node serving, routed and earning?", computed by the agent
 * (src/core/bridge/verdict.ts) and shown as is by the Dashboard banner, the sidebar, the tray and `doctor`.
 * serving: routed and earning; not_routable: serving, but the network sends a model nothing (not in its
 * catalogue, not registered by the hub); not_earning: routed, but unpaid (earnings not enabled, under
 * review, no rate in the network's price list); degraded: a served model does not answer (engine down,
 * unhealthy); stopped: nothing is served (agent stopped, no key, key refused, link down, paused, nothing to
 * serve); unknown: what would decide routing or pay could not be read (the catalogue or the price list
 * answered an error), so nothing is claimed either way.
 */
export type VerdictState = 'serving' | 'not_routable' | 'not_earning' | 'degraded' | 'stopped' | 'unknown';

/** Why, stable for tests and tools (the prose may change). */
export type VerdictCode =
  | 'agent_stopped'
  | 'no_key'
  | 'key_refused'
  | 'hub_disabled'
  | 'awaiting_approval'
  | 'connecting'
  | 'link_down'
  | 'paused'
  | 'nothing_to_serve'
  | 'none_switched_on'
  | 'engine_down'
  | 'model_unhealthy'
  | 'model_degraded'
  | 'model_withdrawn'
  | 'model_gpu_paused'
  | 'context_not_honoured'
  | 'disk_nearly_full'
  | 'no_traffic'
  | 'not_in_catalogue'
  | 'not_registered'
  | 'mapping_contradicts_engine'
  | 'under_review'
  | 'earnings_disabled'
  | 'disk_full'
  | 'disk_read_only'
  | 'serving'
  // What the network's own records say, and what could not be read.
  | 'routing_unknown'
  | 'pricing_unknown'
  | 'not_priced'
  | 'reputation_low'
  | 'traffic_withheld';

export interface VerdictReason {
  code: VerdictCode;
  /** The state this finding alone would give. */
  state: VerdictState;
  /** What is so, in plain words. */
  text: string;
  /** What the owner can do about it (absent when nothing is needed). */
  next?: string;
  /** The models it is about, when it is about some. */
  models?: string[];
}

export interface Verdict {
  state: VerdictState;
  tone: 'ok' | 'warn' | 'bad';
  /** A few words for a badge: "Serving", "Not earning", "Engine down", "Paused"… */
  label: string;
  /** One line: the worst finding, or that all is well. */
  headline: string;
  /** Every finding, worst first; empty when serving with nothing to say. */
  reasons: VerdictReason[];
  /** Served models the network routes requests to now (healthy, in its catalogue, registered). */
  routable: string[];
}

/**
 * What the hub said of this node in its register ack (v0.5): the announced models it registered and its
 * upgrade advice. Kept across acks that do not carry them (heartbeat acks, older hubs).
 */
export interface HubViewState {
  /** The hub's `registered_models`, as last sent; absent: the hub never said (an older hub). */
  registeredModels?: string[];
  /** Announced to the hub but not in its registered_models: these get no traffic. */
  notRegistered: string[];
  /** When the hub last said which models it registered (epoch ms). */
  registeredAt?: number;
  /** The hub's advice that a newer provider release exists; `running` is what this node told it (cp_version). */
  upgrade?: { running?: string; latest?: string; message?: string; at: number };
}

/** One served model's weights: where the files are, whether their hashes are known, and the composite. */
export interface ModelWeightsView {
  model: string;
  /**
   * verified: every file hashed (a manifest exists) · hashing: being read now · queued: waits its turn ·
   * unlocated: the engine does not say where the files are, or they are not on this machine · failed.
   */
  state: 'verified' | 'hashing' | 'queued' | 'unlocated' | 'failed';
  /** go-manifest: ~/.swan/models/<id>/.swan-hash-manifest.json of a Go node; computed: hashed here. */
  source?: 'go-manifest' | 'computed';
  /** The folder the files are in (or the single file's folder). */
  root?: string;
  files: number;
  totalBytes: number;
  doneBytes: number;
  compositeHash?: string;
  /** Why unlocated or failed, for the owner. */
  reason?: string;
}

export interface WeightsView {
  models: ModelWeightsView[];
  /** The file being hashed now, if any. */
  hashing?: { model: string; file: string; doneBytes: number; totalBytes: number };
}
