// config.toml (computing-provider's own format, plus our [Agent] and [Gateway] sections) and the
// models.json beside it. A bad file is refused with the file, the line and what is wrong.
import fs from 'node:fs';
import path from 'node:path';
import { parse as parseToml, TomlError } from 'smol-toml';
import { z } from 'zod';
import { jsonErrorOffset, lineAt } from './json-position';
import { homePath } from './home-layout';

/** What is wrong with a config file, stable for programs and tests; `problem` says it for people. */
export type ConfigErrorCode =
  /** The file cannot be read (missing, permissions). */
  | 'unreadable'
  /** config.toml is not valid TOML. */
  | 'toml_syntax'
  /** A section or key config.toml does not have (a typo). */
  | 'unknown_setting'
  /** A setting of the wrong type or out of range. */
  | 'invalid_setting'
  /** WebSocketURL (or INFERENCE_WS_URL) is not ws:// or wss://. */
  | 'hub_url_scheme'
  /** [Gateway] Listen is not HOST:PORT. */
  | 'listen_format'
  /** models.json is not valid JSON. */
  | 'json_syntax'
  /** models.json is not an object of model id → entry. */
  | 'models_not_object'
  /** A models.json entry is missing a field or has one of the wrong type. */
  | 'invalid_model_entry';

export class ConfigError extends Error {
  constructor(
    readonly code: ConfigErrorCode,
    readonly file: string,
    readonly line: number | undefined,
    readonly problem: string,
    /** The setting at fault, dotted: `Agent.HeartbeatIntervalSeconds`, `INFERENCE_WS_URL`, or a models.json `model.field`. */
    readonly setting?: string,
  ) {
    super(`${file}${line ? `:${line}` : ''}: ${problem}`);
    this.name = 'ConfigError';
  }
}

const seconds = z.number().positive().max(86_400);

const tomlSchema = z
  .object({
    API: z
      .object({ NodeName: z.string().max(128).optional() })
      .passthrough()
      .optional(),
    Inference: z
      .object({
        Enable: z.boolean().optional(),
        ServiceURL: z.string().optional(),
        WebSocketURL: z.string().optional(),
        ApiKey: z.string().optional(),
        Models: z.array(z.string()).optional(),
      })
      .passthrough()
      .optional(),
    Agent: z
      .object({
        HeartbeatIntervalSeconds: seconds.optional(),
        HealthCheckIntervalSeconds: seconds.optional(),
        PingIntervalSeconds: seconds.optional(),
        ReadTimeoutSeconds: seconds.optional(),
        ReconnectMaxBackoffSeconds: seconds.optional(),
        AuthFailedBackoffSeconds: seconds.optional(),
        ResumeGraceSeconds: z.number().min(0).max(3600).optional(),
        ResumeTtlSeconds: seconds.optional(),
        // "auto" (the default): as many as the engine says it runs at once (llama.cpp slots, SGLang max_running_requests…).
        MaxConcurrentPerEndpoint: z
          .union([z.number().int().min(1).max(1024), z.literal('auto')], { error: 'must be a whole number from 1 to 1024, or "auto"' })
          .optional(),
        MaxQueuePerModel: z.number().int().min(0).max(10_000).optional(),
        QueueTimeoutSeconds: seconds.optional(),
        Discovery: z.boolean().optional(),
        EngineHosts: z.array(z.string()).optional(),
        GpuSampleIntervalSeconds: seconds.optional(),
        /** How often the GPU's process list is read for auto-pause and per-GPU placement. */
        GpuProcessCheckSeconds: z.number().min(1).max(3600).optional(),
        EngineHeadersTimeoutSeconds: seconds.optional(),
        EngineIdleTimeoutSeconds: seconds.optional(),
        EngineTotalTimeoutSeconds: seconds.optional(),
        /** A real one-token chat to each engine on the first health check and every Nth after (0 = never). */
        DeepHealthCheckEvery: z.number().int().min(0).max(10_000).optional(),
        /** Failed real probes in a row that withdraw a model from the hub until one passes (0 = never). */
        SelfHealFailures: z.number().int().min(0).max(1000).optional(),
        /** After a withdrawal by error rate: how long before a passing probe announces the model again. */
        SelfHealHoldSeconds: seconds.optional(),
        RetentionMegabytes: z.number().positive().max(65_536).optional(),
        HandshakeTimeoutSeconds: seconds.optional(),
        WriteTimeoutSeconds: seconds.optional(),
        /** The owner's wallet address, sent as register's owner_addr ("" when unset, as the Go provider without a wallet). */
        /** The llama-server the agent runs for `models serve` when the serve names none (else the one on PATH). */
        LlamaServer: z.string().min(1).max(4096).optional(),
        /** Pausing stops the engines this agent runs (and unloads Ollama's models), and resuming starts them again. */
        PauseFreesGpu: z.boolean().optional(),
        /** Release keys SHA256SUMS must be signed by ("ed25519:<base64 public key>"; src/core/update/signing.ts). */
        ReleaseSigningKeys: z
          .array(z.string().regex(/^ed25519:[A-Za-z0-9+/]{43}=$/, 'a release signing key is "ed25519:" and the base64 of its 32-byte public key'))
          .max(16)
          .optional(),
        /** Guard rails: a GPU at or over this many °C first gets fewer requests, then pauses serving (0: off). */
        GpuTemperatureCeilingC: z.number().min(0).max(110).optional(),
        /** Guard rails: the same for a GPU's power draw in watts (0: off). */
        GpuPowerCeilingW: z.number().min(0).max(2000).optional(),
        OwnerAddr: z
          .string()
          .regex(/^(0x[0-9a-fA-F]{40})?$/, 'must be a 0x-prefixed 40-hex-digit address, or empty')
          .optional(),
      })
      .strict()
      .optional(),
    Gateway: z
      .object({
        Enable: z.boolean().optional(),
        Listen: z.string().optional(),
        WebsocketAuth: z.boolean().optional(),
        AllowedOrigins: z.array(z.string()).optional(),
      })
      .strict()
      .optional(),
  })
  .passthrough();

/** config.toml as written on disk (before defaults): what a test or a tool may write. */
export type ConfigFile = z.input<typeof tomlSchema>;

const modelEntry = z
  .object({
    endpoint: z.string().min(1),
    local_model: z.string().optional(),
    api_key: z.string().optional(),
    gpu_memory: z.number().optional(),
    format: z.string().optional(),
    quantization: z.string().optional(),
    max_concurrent: z.number().int().min(1).max(1024).optional(),
    /** The context window the engine serves this model with; wins over what the engine reports. */
    context_length: z.number().int().min(1).max(100_000_000).optional(),
    /** What the model does (text-generation, multimodal, embedding, image, audio): routes hub operations and decides the deep health probe. */
    category: z.string().max(64).optional(),
    /** The GPU indexes its engine runs on, as the owner says (a rig with several GPUs pauses it with them). */
    gpus: z.array(z.number().int().min(0).max(255)).max(64).optional(),
  })
  .passthrough();
export type ModelEntry = z.infer<typeof modelEntry>;

export interface AgentTimings {
  heartbeatIntervalMs: number;
  healthCheckIntervalMs: number;
  pingIntervalMs: number;
  readTimeoutMs: number;
  reconnectMaxBackoffMs: number;
  authFailedBackoffMs: number;
  resumeGraceMs: number;
  resumeTtlMs: number;
  queueTimeoutMs: number;
  gpuSampleIntervalMs: number;
  gpuProcessCheckMs: number;
  /**
   * Longest wait for an engine's response headers (a stream fails with 504; any call that passes it makes the
   * endpoint suspect), for the first and each next byte of a stream, and for a whole call, stream or not.
   */
  engineHeadersTimeoutMs: number;
  engineIdleTimeoutMs: number;
  engineTotalTimeoutMs: number;
  /** The deep health check's cadence: every Nth check asks the engine for one token (0 = never). */
  deepHealthCheckEvery: number;
  /** Self-healing: failed probes in a row that withdraw a model (0 = never), and the hold after an error-rate withdrawal. */
  selfHealFailures: number;
  selfHealHoldMs: number;
  /** Memory for answers kept for resume-v1 across link drops. */
  retentionBytes: number;
  handshakeTimeoutMs: number;
  writeTimeoutMs: number;
}

export interface ProviderConfig {
  file: string;
  nodeName: string;
  enable: boolean;
  serviceUrl: string;
  webSocketUrl: string;
  apiKey: string;
  /** Models the config names; empty = every model in models.json. */
  models: string[];
  modelEntries: Record<string, ModelEntry>;
  agent: AgentTimings & {
    /** The fixed per-endpoint limit, or the fallback (4) when capacityAuto and the engine does not say. */
    maxConcurrentPerEndpoint: number;
    /** MaxConcurrentPerEndpoint = "auto" (the default): read each engine's own capacity. */
    capacityAuto: boolean;
    maxQueuePerModel: number;
    discovery: boolean;
    engineHosts: string[];
    ownerAddr: string;
    /** [Agent] LlamaServer ("" = look on PATH). */
    llamaServer: string;
    /** [Agent] PauseFreesGpu. */
    pauseFreesGpu: boolean;
    /** The owner's own release keys, beside the project's (src/core/update/signing.ts). */
    releaseSigningKeys: string[];
    /** [Agent] GpuTemperatureCeilingC and GpuPowerCeilingW (0: off). */
    gpuTemperatureCeilingC: number;
    gpuPowerCeilingW: number;
  };
  gateway: { enable: boolean; listen: string; websocketAuth: boolean; allowedOrigins: string[] };
  /** Notes for the log: env overrides applied, odd values accepted. */
  warnings: string[];
}

export const DEFAULT_HUB_URL = 'ws://127.0.0.1:8081';

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Finds the 1-based line that defines `key` (best effort; used to point at a bad value). */
function lineOf(text: string, section: string | undefined, key: string | undefined): number | undefined {
  const lines = text.split(/\r?\n/);
  let inSection = section === undefined;
  for (let i = 0; i < lines.length; i++) {
    const l = (lines[i] ?? '').trim();
    const header = /^\[([^\]]+)\]/.exec(l);
    if (header) {
      inSection = header[1]?.trim() === section;
      if (inSection && key === undefined) return i + 1;
      continue;
    }
    if (inSection && key !== undefined && new RegExp(`^["']?${escapeRegExp(key)}["']?\\s*=`).test(l)) return i + 1;
  }
  return undefined;
}

export function readModelsJson(file: string): Record<string, ModelEntry> {
  if (!fs.existsSync(file)) return {};
  const text = fs.readFileSync(file, 'utf8');
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    const m = /position (\d+)/.exec(String(e));
    const at = m ? Number(m[1]) : jsonErrorOffset(text);
    const line = at !== undefined ? lineAt(text, at) : undefined;
    throw new ConfigError('json_syntax', file, line, `not valid JSON (${(e as Error).message}). Fix the syntax or delete the file.`);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new ConfigError(
      'models_not_object',
      file,
      1,
      'must be a JSON object mapping each model id to its entry, for example {"my-model": {"endpoint": "http://127.0.0.1:8000"}}.',
    );
  }
  const parsed = z.record(z.string(), modelEntry).safeParse(raw);
  if (!parsed.success) {
    const i = parsed.error.issues[0];
    const model = String(i?.path[0] ?? '');
    // The model's key (its id followed by a colon), not an earlier value that happens to equal it.
    const at = model ? new RegExp(`${escapeRegExp(JSON.stringify(model))}\\s*:`).exec(text) : null;
    // Then the field inside it ("max_concurrent": "4" → that line), when the problem is in one.
    const field = i?.path[1];
    const fieldAt = at && typeof field === 'string' ? new RegExp(`${escapeRegExp(JSON.stringify(field))}\\s*:`).exec(text.slice(at.index)) : null;
    const pos = at ? at.index + (fieldAt?.index ?? 0) : undefined;
    const line = pos !== undefined ? text.slice(0, pos).split('\n').length : undefined;
    const setting = [model, ...(i?.path.slice(1) ?? [])].map(String).join('.');
    throw new ConfigError(
      'invalid_model_entry',
      file,
      line,
      `model "${model}": ${i?.path.slice(1).join('.') || 'entry'} ${i?.message}. Each model needs at least {"endpoint": "http://127.0.0.1:8000"}.`,
      setting,
    );
  }
  return parsed.data;
}

/** The TOML parser's message, or a plainer one where it misleads (an unclosed quote reads as "control characters"). */
function tomlProblem(e: TomlError, text: string): string {
  const first = e.message.split('\n')[0]!.replace(/^Invalid TOML document:\s*/, '');
  const line = text.split('\n')[(e.line ?? 1) - 1] ?? '';
  const quotes = (line.replace(/\\./g, '').replace(/#.*$/, '').match(/"/g) ?? []).length;
  if (/control characters/.test(first) && quotes % 2 === 1) return 'a quoted value is not closed: add the missing " at the end of the value.';
  return first;
}

function ms(s: number | undefined, dflt: number): number {
  return Math.round((s ?? dflt) * 1000);
}

/** Loads config.toml and models.json. Environment overrides: INFERENCE_WS_URL, INFERENCE_API_KEY. */
export function loadConfig(file: string, env: NodeJS.ProcessEnv = process.env): ProviderConfig {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new ConfigError(
      'unreadable',
      file,
      undefined,
      `cannot read the file (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}). Run "swan-provider init" to create one.`,
    );
  }
  let raw: unknown;
  try {
    raw = parseToml(text);
  } catch (e) {
    if (e instanceof TomlError) throw new ConfigError('toml_syntax', file, e.line, `TOML syntax error: ${tomlProblem(e, text)}`);
    throw new ConfigError('toml_syntax', file, undefined, `TOML syntax error: ${(e as Error).message}`);
  }
  const parsed = tomlSchema.safeParse(raw);
  if (!parsed.success) {
    const i = parsed.error.issues[0];
    const [section, key] = i?.path.map(String) ?? [];
    const unknownKey = i?.code === 'unrecognized_keys' ? (i as { keys?: string[] }).keys?.[0] : undefined;
    const where = unknownKey ?? key;
    throw new ConfigError(
      unknownKey ? 'unknown_setting' : 'invalid_setting',
      file,
      lineOf(text, section, where),
      unknownKey ? `unknown setting "${unknownKey}" in [${section}]. Check its spelling.` : `[${section ?? ''}]${where ? ` ${where}` : ''}: ${i?.message}`,
      [section, where].filter(Boolean).join('.') || undefined,
    );
  }
  const c = parsed.data;
  const warnings: string[] = [];
  const inf = c.Inference ?? {};
  const ag = c.Agent ?? {};
  const gw = c.Gateway ?? {};
  let webSocketUrl = inf.WebSocketURL ?? DEFAULT_HUB_URL;
  let apiKey = inf.ApiKey ?? '';
  if (env.INFERENCE_WS_URL) {
    webSocketUrl = env.INFERENCE_WS_URL;
    warnings.push('WebSocketURL taken from INFERENCE_WS_URL');
  }
  if (env.INFERENCE_API_KEY) {
    apiKey = env.INFERENCE_API_KEY;
    warnings.push('provider key taken from INFERENCE_API_KEY');
  }
  if (!/^wss?:\/\//.test(webSocketUrl)) {
    if (env.INFERENCE_WS_URL) {
      throw new ConfigError(
        'hub_url_scheme',
        file,
        undefined,
        `the environment variable INFERENCE_WS_URL ("${webSocketUrl}") must start with ws:// or wss://; fix or unset it`,
        'INFERENCE_WS_URL',
      );
    }
    throw new ConfigError(
      'hub_url_scheme',
      file,
      lineOf(text, 'Inference', 'WebSocketURL'),
      `WebSocketURL "${webSocketUrl}" must start with ws:// or wss://`,
      'Inference.WebSocketURL',
    );
  }
  const listen = gw.Listen ?? '127.0.0.1:18080';
  const port = Number(/:(\d{1,5})$/.exec(listen)?.[1] ?? 0);
  if (!/^[^\s:]+:\d{1,5}$/.test(listen) || port < 1 || port > 65535) {
    throw new ConfigError('listen_format', file, lineOf(text, 'Gateway', 'Listen'), `Listen "${listen}" must look like 127.0.0.1:18080`, 'Gateway.Listen');
  }
  return {
    file: path.resolve(file),
    nodeName: c.API?.NodeName ?? 'my-provider',
    enable: inf.Enable ?? true,
    // computing-provider writes ServiceURL = "" to mean "derive it from WebSocketURL".
    serviceUrl: inf.ServiceURL || deriveServiceUrl(webSocketUrl),
    webSocketUrl,
    apiKey,
    models: inf.Models ?? [],
    modelEntries: readModelsJson(homePath(path.dirname(file), 'models')),
    agent: {
      // The Go provider's heartbeatPump ticks every 30 s (inference_client.go).
      heartbeatIntervalMs: ms(ag.HeartbeatIntervalSeconds, 30),
      healthCheckIntervalMs: ms(ag.HealthCheckIntervalSeconds, 30),
      pingIntervalMs: ms(ag.PingIntervalSeconds, 54),
      readTimeoutMs: ms(ag.ReadTimeoutSeconds, 60),
      reconnectMaxBackoffMs: ms(ag.ReconnectMaxBackoffSeconds, 30),
      authFailedBackoffMs: ms(ag.AuthFailedBackoffSeconds, 300),
      resumeGraceMs: ms(ag.ResumeGraceSeconds, 2),
      resumeTtlMs: ms(ag.ResumeTtlSeconds, 300),
      queueTimeoutMs: ms(ag.QueueTimeoutSeconds, 30),
      gpuSampleIntervalMs: ms(ag.GpuSampleIntervalSeconds, 1),
      gpuProcessCheckMs: ms(ag.GpuProcessCheckSeconds, 5),
      engineHeadersTimeoutMs: ms(ag.EngineHeadersTimeoutSeconds, 60),
      engineIdleTimeoutMs: ms(ag.EngineIdleTimeoutSeconds, 120),
      engineTotalTimeoutMs: ms(ag.EngineTotalTimeoutSeconds, 600),
      // Go's DeepCheckEvery: at a 30 s interval, one token per engine every five minutes.
      deepHealthCheckEvery: ag.DeepHealthCheckEvery ?? 10,
      // Go's self-check FailuresBeforeDisable; the hold is one default deep-check period (10 x 30 s).
      selfHealFailures: ag.SelfHealFailures ?? 3,
      selfHealHoldMs: ms(ag.SelfHealHoldSeconds, 300),
      retentionBytes: Math.round((ag.RetentionMegabytes ?? 64) * 1024 * 1024),
      // Go's dialer HandshakeTimeout and writeWait.
      handshakeTimeoutMs: ms(ag.HandshakeTimeoutSeconds, 10),
      writeTimeoutMs: ms(ag.WriteTimeoutSeconds, 10),
      ownerAddr: ag.OwnerAddr ?? '',
      llamaServer: ag.LlamaServer ?? '',
      pauseFreesGpu: ag.PauseFreesGpu ?? false,
      releaseSigningKeys: ag.ReleaseSigningKeys ?? [],
      gpuTemperatureCeilingC: ag.GpuTemperatureCeilingC ?? 0,
      gpuPowerCeilingW: ag.GpuPowerCeilingW ?? 0,
      maxConcurrentPerEndpoint: typeof ag.MaxConcurrentPerEndpoint === 'number' ? ag.MaxConcurrentPerEndpoint : 4,
      capacityAuto: typeof ag.MaxConcurrentPerEndpoint !== 'number',
      maxQueuePerModel: ag.MaxQueuePerModel ?? 32,
      discovery: ag.Discovery ?? true,
      engineHosts: ag.EngineHosts ?? [],
    },
    gateway: { enable: gw.Enable ?? false, listen, websocketAuth: gw.WebsocketAuth ?? true, allowedOrigins: gw.AllowedOrigins ?? [] },
    warnings,
  };
}

/**
 * The HTTP API address for an empty ServiceURL, derived from the WebSocket URL exactly as the Go
 * provider's NewInferenceClient does (internal/computing/inference_client.go): wss:// -> https://,
 * ws:// -> http://, a trailing "/ws" dropped, then the first "-ws" dropped (the host's, as in
 * wss://inference-ws.swanchain.io -> https://inference.swanchain.io).
 */
export function deriveServiceUrl(webSocketUrl: string): string {
  let u = webSocketUrl.replace('wss://', 'https://').replace('ws://', 'http://');
  if (u.endsWith('/ws')) u = u.slice(0, -3);
  return u.replace('-ws', '');
}

/** The hub URL the link dials: WebSocketURL + "/ws" (a URL already ending in /ws is accepted, with a warning). */
export function hubDialUrl(webSocketUrl: string): { url: string; warning?: string } {
  let u: URL;
  try {
    u = new URL(webSocketUrl);
  } catch {
    return { url: `${webSocketUrl.replace(/\/+$/, '')}/ws` };
  }
  const pathname = u.pathname.replace(/\/+$/, '');
  if (pathname.endsWith('/ws')) {
    u.pathname = pathname;
    return { url: u.toString(), warning: 'WebSocketURL should not include /ws (it is appended automatically); using it as given' };
  }
  u.pathname = `${pathname}/ws`;
  return { url: u.toString() };
}
