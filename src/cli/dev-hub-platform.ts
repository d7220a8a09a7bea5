// The dev hub's stand-in of the platform HTTP API (HUB-PROTOCOL.md, "HTTP API"), answered from the
// fixtures in dev-hub-fixtures/ and from what the dev hub actually served:
//   GET /api/v1/provider/status     (Bearer key) per-key status: active by default, or as configured;
//                                   an unknown key gets 401 with api_key_valid false
//   GET /api/v1/provider/me/stats   (Bearer key) {data: {...}} from the requests this hub routed
//   GET /api/v1/stats/model-demand  public prices, {code: 0, data: {models: [...]}} (plus the repository's
//                                   models with simulated demand, when the dev hub serves one)
//   GET /api/v1/models?page_size=N  public catalogue, {code: 0, data: {list: [...]}}
//   GET/PUT /api/v1/provider/me     (Bearer key) the provider's addresses; the owner address set once (409 after)
//   POST /api/v1/provider/request-approval (Bearer key) 409 when asked already
//   GET /api/v1/provider/collateral/contract public, a simulated chain
// plus the dev routes POST /dev/status {key, status} (change a key's status) and GET /dev/stats.
import type http from 'node:http';
import catalogue from './dev-hub-fixtures/models.json' with { type: 'json' };
import demand from './dev-hub-fixtures/model-demand.json' with { type: 'json' };
import statuses from './dev-hub-fixtures/provider-status.json' with { type: 'json' };
import { isoTime } from '../shared/dates';
import { readBody } from '../core/http/read-body';

/** A simulated chain: the collateral step as the platform lists it, clearly not a real contract. */
const DEV_COLLATERAL = {
  chains: [
    {
      chain_id: 0,
      chain_name: 'Simulated chain (dev hub)',
      contract_address: '0x0000000000000000000000000000000000000000',
      token_symbol: 'SIM',
      token_decimals: 18,
      min_collateral: 100,
    },
  ],
};

interface DevAccount {
  owner_address: string;
  beneficiary_address: string;
  approvalRequested: boolean;
}

export type DevStatusName = keyof typeof statuses;
export const DEV_STATUS_NAMES = Object.keys(statuses) as DevStatusName[];

export interface ServedStats {
  requests: number;
  ok: number;
  failed: number;
  /** A stream that failed before data with an error-first chunk: the failure is the request's (not retried). */
  errorFirstFailures: number;
  /** An error only in stream_end, before any data: the real hub reads it as a provider failure and retries elsewhere. */
  providerFailures: number;
  /** An error in stream_end after data flowed. */
  midStreamFailures: number;
  tokensIn: number;
  tokensOut: number;
  /** USD: tokens × the model-demand payout (provider_*_price, else the list price) per 1M tokens. */
  earningsUsd: number;
  lastConnected?: string;
}

/** A model-demand row as served: the fixture's, or one of the repository's (dev-hub-repository.ts). */
export type DemandRow = { model_id: string } & Record<string, unknown>;

const perMillion = (v: unknown): number => (typeof v === 'number' ? v : 0);

const emptyStats = (): ServedStats => ({
  requests: 0,
  ok: 0,
  failed: 0,
  errorFirstFailures: 0,
  providerFailures: 0,
  midStreamFailures: 0,
  tokensIn: 0,
  tokensOut: 0,
  earningsUsd: 0,
});

export type FailureKind = 'error_first' | 'provider_failure' | 'mid_stream' | 'non_stream';

export class DevPlatform {
  private readonly perKey = new Map<string, DevStatusName>();
  private readonly accounts = new Map<string, DevAccount>();
  /** Served totals, per provider key and overall. */
  readonly served = new Map<string, ServedStats>();
  readonly total = emptyStats();
  /** The model-demand answer: the fixture, then each extra row whose model the fixture does not list. */
  private readonly demand: unknown;
  private readonly catalogue: Array<{ id: string; slug: string; name: string; category: string; active: boolean }>;
  /** What a provider is paid per 1M tokens of a model: provider_*_price, else the list price. */
  private readonly payout: Map<string, { input: number; output: number }>;

  constructor(
    private readonly acceptedKey: string | undefined,
    private readonly earningsEnabled: boolean,
    initial: Record<string, DevStatusName> = {},
    extraDemand: DemandRow[] = [],
  ) {
    for (const [k, v] of Object.entries(initial)) this.perKey.set(k, v);
    const listed = new Set(demand.data.models.map((m) => m.model_id));
    const models: DemandRow[] = [...demand.data.models, ...extraDemand.filter((m) => !listed.has(m.model_id))];
    this.demand = { ...demand, data: { ...demand.data, models } };
    // The repository's models are in the public catalogue too: served here, they are routed (the verdict's "routed").
    const catalogued = new Set(catalogue.data.list.map((m) => m.id));
    this.catalogue = [
      ...catalogue.data.list,
      ...extraDemand
        .filter((m) => !catalogued.has(m.model_id))
        .map((m) => ({
          id: m.model_id,
          slug: m.model_id.split('/').pop()!.toLowerCase(),
          name: typeof m.model_name === 'string' ? m.model_name : m.model_id,
          category: 'text-generation',
          active: true,
        })),
    ];
    this.payout = new Map(
      models.map((m) => [
        m.model_id,
        { input: perMillion(m.provider_input_price ?? m.input_price), output: perMillion(m.provider_output_price ?? m.output_price) },
      ]),
    );
  }

  setStatus(key: string, status: DevStatusName): void {
    this.perKey.set(key, status);
  }

  private statusOf(key: string): DevStatusName {
    const set = this.perKey.get(key);
    if (set) return set;
    if (key !== '' && (this.acceptedKey === undefined || key === this.acceptedKey)) return 'active';
    return 'invalid';
  }

  /** Whether the WebSocket register should accept this key (a key the platform knows, whatever its status). */
  knowsKey(key: string): boolean {
    return key !== '' && this.statusOf(key) !== 'invalid';
  }

  private stats(key: string): ServedStats {
    let s = this.served.get(key);
    if (!s) this.served.set(key, (s = emptyStats()));
    return s;
  }

  connected(key: string): void {
    this.stats(key).lastConnected = isoTime(Date.now());
  }

  /** Records one finished request the hub routed to a provider holding `key`. */
  record(key: string, f: { ok: boolean; model?: string; failure?: FailureKind; tokensIn?: number; tokensOut?: number }): void {
    // A provider whose earnings are not enabled is paid nothing, as the platform does.
    const price = this.earningsEnabled && f.ok && f.model ? this.payout.get(f.model) : undefined;
    const earned = price ? ((f.tokensIn ?? 0) * price.input + (f.tokensOut ?? 0) * price.output) / 1_000_000 : 0;
    for (const s of [this.stats(key), this.total]) {
      s.earningsUsd += earned;
      s.requests++;
      if (f.ok) s.ok++;
      else s.failed++;
      if (f.failure === 'error_first') s.errorFirstFailures++;
      if (f.failure === 'provider_failure') s.providerFailures++;
      if (f.failure === 'mid_stream') s.midStreamFailures++;
      s.tokensIn += f.tokensIn ?? 0;
      s.tokensOut += f.tokensOut ?? 0;
    }
  }

  /** Answers a platform route; false when `route` is not one. */
  handle(route: string, url: URL, req: http.IncomingMessage, json: (status: number, body: unknown) => void): boolean {
    const key = (req.headers.authorization ?? '').replace(/^Bearer\s+/i, '').trim();
    switch (route) {
      case 'GET /api/v1/provider/status': {
        const name = this.statusOf(key);
        const body = { ...statuses[name], ...(name === 'invalid' ? {} : { earnings_enabled: this.earningsEnabled }) };
        json(name === 'invalid' ? 401 : 200, body);
        return true;
      }
      case 'GET /api/v1/provider/me/stats': {
        if (this.statusOf(key) === 'invalid') {
          json(401, { error: { message: 'invalid or revoked provider API key' } });
          return true;
        }
        const s = this.served.get(key) ?? emptyStats();
        json(200, {
          data: {
            total_inferences: s.requests,
            successful_inferences: s.ok,
            failed_inferences: s.failed,
            total_input_tokens: s.tokensIn,
            total_output_tokens: s.tokensOut,
            total_tokens: s.tokensIn + s.tokensOut,
            total_earnings_usdc: Math.round(s.earningsUsd * 1e6) / 1e6,
            uptime_7d_percent: s.lastConnected ? 100 : 0,
            last_connected: s.lastConnected ?? '',
          },
        });
        return true;
      }
      case 'GET /api/v1/provider/collateral/contract':
        json(200, DEV_COLLATERAL);
        return true;
      case 'GET /api/v1/provider/me':
      case 'PUT /api/v1/provider/me':
      case 'POST /api/v1/provider/request-approval':
        void this.account(route, key, req, json);
        return true;
      case 'GET /api/v1/stats/model-demand':
        json(200, this.demand);
        return true;
      case 'GET /api/v1/models': {
        const size = Math.min(Math.max(Number(url.searchParams.get('page_size') ?? 20) || 20, 1), 200);
        const list = this.catalogue.slice(0, size);
        json(200, { ...catalogue, data: { ...catalogue.data, list, total: this.catalogue.length } });
        return true;
      }
      case 'GET /dev/stats':
        json(200, { total: this.total, perKey: Object.fromEntries([...this.served].map(([k, v]) => [`${k.slice(0, 8)}…`, v])) });
        return true;
      default:
        return false;
    }
  }

  /** The provider's account: addresses (the owner's set once, as the platform does) and the approval request. */
  private async account(route: string, key: string, req: http.IncomingMessage, json: (status: number, body: unknown) => void): Promise<void> {
    if (this.statusOf(key) === 'invalid') return json(401, { error: { message: 'invalid or revoked provider API key' } });
    let a = this.accounts.get(key);
    if (!a) this.accounts.set(key, (a = { owner_address: '', beneficiary_address: '', approvalRequested: false }));
    const me = () => ({
      data: { id: statuses[this.statusOf(key)].provider_id, owner_address: a.owner_address, worker_address: '', beneficiary_address: a.beneficiary_address },
    });
    if (route === 'GET /api/v1/provider/me') return json(200, me());
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(await readBody(req, 64 * 1024)) as Record<string, unknown>;
    } catch {
      return json(400, { error: { message: 'invalid JSON body' } });
    }
    const wallet = (v: unknown): v is string => typeof v === 'string' && /^0x[0-9a-fA-F]{40}$/.test(v);
    if (route === 'POST /api/v1/provider/request-approval') {
      if (a.approvalRequested) return json(409, { error: { message: 'an approval request is already pending' } });
      a.approvalRequested = true;
      return json(200, {
        provider_id: statuses[this.statusOf(key)].provider_id,
        status: 'under_review',
        message: 'Approval requested (simulated: the dev hub approves nothing).',
        requested_at: isoTime(Date.now()),
      });
    }
    if (body.owner_address !== undefined) {
      if (a.owner_address) return json(409, { error: { message: 'owner address is already set and cannot be changed' } });
      if (!wallet(body.owner_address)) return json(400, { error: { message: 'invalid owner_address' } });
      a.owner_address = body.owner_address;
    }
    if (body.beneficiary_address !== undefined) {
      if (!wallet(body.beneficiary_address)) return json(400, { error: { message: 'invalid beneficiary_address' } });
      a.beneficiary_address = body.beneficiary_address;
    }
    return json(200, me());
  }
}
