// What startGateway takes, and the defaults every part of the gateway reads from one resolved object.
import type { InferenceRunner } from '../inference/runner';
import type { Logger } from '../base/log';
import type { FleetSnapshot } from './describe-fleet';
import type { GatewayKeys } from './keys';
import { CodedError } from '../../shared/bridge-error';
import { defaultConnectionCap } from '../http/connection-budget';
import { isLoopbackHost } from '../http/loopback';

export interface GatewayLimitOptions {
  /** Requests per minute per API key (default 60). */
  ratePerMinute?: number;
  /** Requests allowed at once after a quiet spell (default 10). */
  burst?: number;
  /** Concurrent streams per API key (default 4). */
  maxConcurrent?: number;
}

export interface GatewayOptions {
  /** Listen address (default 127.0.0.1). A LAN address is the owner's explicit choice. */
  host?: string;
  /** Listen port (default 18080, the seed's; 0 picks a free one). */
  port?: number;
  /** Runs every request through the shared scheduler, the engine and the request book. */
  runner: InferenceRunner;
  /** The enabled models (ModelRegistry.announced()). */
  models: () => string[];
  keys: GatewayKeys;
  /** Home folder: the HMAC key for resume tokens lives here (gateway-resume.key, 0600). */
  home: string;
  log: Logger;
  /** describe_fleet answers with this (see describeFleet in fleet.ts). */
  fleet: () => FleetSnapshot;
  /** Seed 002's `websocket_auth` for /v1/ws (default true). false is honoured on loopback only. */
  websocketAuth?: boolean;
  /** Browser origins allowed to connect, e.g. "http://localhost:5173". Requests without Origin are not browsers. */
  allowedOrigins?: string[];
  limits?: GatewayLimitOptions;
  /** How long a stream's state is kept for resume after its client left or it finished (default 5 min). */
  resumeTtlMs?: number;
  /** Bytes kept for one request while its client is away; generation pauses beyond it (default 1 MiB). */
  retentionBytes?: number;
  /** Bytes kept for all requests; abandoned finished ones are dropped first beyond it (default 64 MiB). */
  maxRetainedBytes?: number;
  /** stream-v1 flow-control window: unacked bytes and messages (default 64 KiB / 32). */
  window?: { bytes?: number; messages?: number };
  /** A client whose window stays full this long is disconnected and its request cancelled (default 30 s). */
  ackTimeoutMs?: number;
  /** stream-v1 heartbeat and WebSocket ping interval (default 15 s). */
  heartbeatMs?: number;
  /** /v1/ws closes a connection with no message and no running request for this long (seed 002: 300 s). */
  idleTimeoutMs?: number;
  /** Largest WebSocket message or HTTP body accepted (seed 002: 1 MiB). */
  maxMessageBytes?: number;
  /** stream-v1 without credentials at connect must send {"type":"auth"} within this time (default 10 s). */
  authTimeoutMs?: number;
  /** Connections open at once (default: a quarter of the process's file limit, 64 to 1024). */
  maxConnections?: number;
  /** Connections open at once from one address (default: all of them on loopback, a quarter elsewhere). */
  maxConnectionsPerAddress?: number;
  /** A request's headers must arrive within this (default 10 s). */
  headersTimeoutMs?: number;
  /** A whole request (headers and body) must arrive within this (default 60 s). */
  requestTimeoutMs?: number;
}

export interface ResolvedGatewayOptions extends Pick<GatewayOptions, 'runner' | 'models' | 'keys' | 'home' | 'log' | 'fleet'> {
  host: string;
  port: number;
  websocketAuth: boolean;
  allowedOrigins: string[];
  limits: Required<GatewayLimitOptions>;
  resumeTtlMs: number;
  retentionBytes: number;
  maxRetainedBytes: number;
  window: { bytes: number; messages: number };
  ackTimeoutMs: number;
  heartbeatMs: number;
  idleTimeoutMs: number;
  maxMessageBytes: number;
  authTimeoutMs: number;
  maxConnections: number;
  maxConnectionsPerAddress: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
}

export const DEFAULT_PORT = 18080;
export const MiB = 1024 * 1024;

/** Why gateway options were refused: an option out of range (`field` names it), or a Listen that is not host:port. */
export type GatewayOptionErrorCode = 'invalid_option' | 'listen_format';

export class GatewayOptionError extends CodedError<GatewayOptionErrorCode> {
  override name = 'GatewayOptionError';
}

function positive(name: string, v: number): number {
  if (!Number.isFinite(v) || v <= 0) throw new GatewayOptionError('invalid_option', `gateway option ${name} must be a positive number, got ${v}`, name);
  return v;
}

/** Applies defaults and checks numbers; throws RangeError with the option's name on a bad value. */
export function resolveOptions(o: GatewayOptions): ResolvedGatewayOptions {
  const r: ResolvedGatewayOptions = {
    host: o.host ?? '127.0.0.1',
    port: o.port ?? DEFAULT_PORT,
    runner: o.runner,
    models: o.models,
    keys: o.keys,
    home: o.home,
    log: o.log,
    fleet: o.fleet,
    websocketAuth: o.websocketAuth ?? true,
    allowedOrigins: (o.allowedOrigins ?? []).map((x) => x.trim().replace(/\/+$/, '')).filter(Boolean),
    limits: {
      ratePerMinute: positive('limits.ratePerMinute', o.limits?.ratePerMinute ?? 60),
      burst: positive('limits.burst', o.limits?.burst ?? 10),
      maxConcurrent: positive('limits.maxConcurrent', o.limits?.maxConcurrent ?? 4),
    },
    resumeTtlMs: positive('resumeTtlMs', o.resumeTtlMs ?? 5 * 60_000),
    retentionBytes: positive('retentionBytes', o.retentionBytes ?? MiB),
    maxRetainedBytes: positive('maxRetainedBytes', o.maxRetainedBytes ?? 64 * MiB),
    window: { bytes: positive('window.bytes', o.window?.bytes ?? 64 * 1024), messages: positive('window.messages', o.window?.messages ?? 32) },
    ackTimeoutMs: positive('ackTimeoutMs', o.ackTimeoutMs ?? 30_000),
    heartbeatMs: positive('heartbeatMs', o.heartbeatMs ?? 15_000),
    idleTimeoutMs: positive('idleTimeoutMs', o.idleTimeoutMs ?? 300_000),
    maxMessageBytes: positive('maxMessageBytes', o.maxMessageBytes ?? MiB),
    authTimeoutMs: positive('authTimeoutMs', o.authTimeoutMs ?? 10_000),
    maxConnections: 0,
    maxConnectionsPerAddress: 0,
    headersTimeoutMs: positive('headersTimeoutMs', o.headersTimeoutMs ?? 10_000),
    requestTimeoutMs: positive('requestTimeoutMs', o.requestTimeoutMs ?? 60_000),
  };
  r.maxConnections = Math.floor(positive('maxConnections', o.maxConnections ?? defaultConnectionCap(1024)));
  // On loopback every client is the same address: the total is its cap. Elsewhere one host gets a quarter.
  r.maxConnectionsPerAddress = Math.floor(
    positive(
      'maxConnectionsPerAddress',
      o.maxConnectionsPerAddress ?? (isLoopbackHost(r.host) ? r.maxConnections : Math.max(16, Math.floor(r.maxConnections / 4))),
    ),
  );
  if (!Number.isInteger(r.port) || r.port < 0 || r.port > 65535)
    throw new GatewayOptionError('invalid_option', `gateway option port must be 0-65535, got ${r.port}`, 'port');
  return r;
}

/** config.toml's [Gateway] Listen ("127.0.0.1:18080", "0.0.0.0:8080") as host and port. */
export function parseListen(listen: string): { host: string; port: number } {
  const m = /^\s*([^\s:]+):(\d{1,5})\s*$/.exec(listen);
  const port = m ? Number(m[2]) : NaN;
  if (!m || port > 65535) throw new GatewayOptionError('listen_format', `Listen "${listen}" must look like 127.0.0.1:18080`);
  return { host: m[1] as string, port };
}
