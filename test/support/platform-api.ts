// A stand-in of the Swan platform's HTTP API (what HUB-PROTOCOL.md "HTTP API" and the Go provider's
// model_price.go / provider_stats.go read): GET /api/v1/stats/model-demand (public),
// GET /api/v1/provider/me/stats and /api/v1/provider/status (Bearer provider key). Each route's answer
// can be switched to a failure: an HTTP status, raw text, a hang, or a delay. Records every hit.
// The provider's account (cmd/computing-provider/inference.go): GET/PUT /api/v1/provider/me (the owner
// address set once: a second set is refused with 409 and `{error: {message}}`, as the Go CLI reads
// errors), POST /api/v1/provider/request-approval (409 when asked already), and the public
// GET /api/v1/provider/collateral/contract; `account` holds their state.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody } from '../../src/core/http/read-body';

export type RouteBehaviour =
  { kind: 'json'; body: unknown; delayMs?: number } | { kind: 'status'; status: number; body?: string } | { kind: 'raw'; text: string } | { kind: 'hang' };

/** model-demand as the Go test fixture has it: provider payout rates present. */
export const MODEL_DEMAND = {
  code: 0,
  data: {
    models: [
      { model_id: 'openai/gpt-5.4', input_price: 2, output_price: 12, provider_input_price: 1.8, provider_output_price: 10.8, tier: 'standard' },
      { model_id: 'legacy/model', input_price: 0.5, output_price: 1.5 },
    ],
  },
};

export const ME_STATS = {
  total_inferences: 120,
  successful_inferences: 117,
  failed_inferences: 3,
  total_input_tokens: 24_000,
  total_output_tokens: 36_000,
  total_tokens: 60_000,
  total_earnings_usdc: 0.4321,
  uptime_7d_percent: 97.5,
  last_connected: '2026-11-30T22:10:00Z',
};

/** GET /api/v1/provider/status for an active provider whose earnings are on. */
export const PROVIDER_STATUS_ACTIVE = {
  provider_id: 'p1',
  name: 'test',
  status: 'active',
  can_connect: true,
  api_key_valid: true,
  message: 'ok',
  earnings_enabled: true,
};

/** GET /api/v1/provider/me (platform_data.go providerID): the key's provider and its addresses. */
export const PROVIDER_ME = {
  id: 'p1',
  owner_address: '0x00000000000000000000000000000000000000aa',
  worker_address: '0x00000000000000000000000000000000000000bb',
  beneficiary_address: '0x00000000000000000000000000000000000000cc',
};

/** GET /api/v1/providers/p1/models/details (platform_data.go PlatformModel): one offered model, one history row. */
export const MODEL_DETAILS = {
  data: {
    models: [
      {
        model_id: 'openai/gpt-5.4',
        model_name: 'GPT',
        offered: true,
        available: 1,
        capacity: 2,
        recent_success_count: 40,
        recent_failure_count: 9,
        dispatch_failures: 3,
        throughput_tok_per_s: 41.5,
        total_requests: 120,
        total_tokens: 60_000,
        success_count: 111,
        failure_count: 9,
        last_request_at: '2026-11-30T22:09:00Z',
        context_length: 8192,
        context_source: 'detected',
        input_price: 1.8,
        output_price: 10.8,
      },
      {
        model_id: 'legacy/model',
        offered: false,
        available: 0,
        capacity: 0,
        recent_success_count: 0,
        recent_failure_count: 0,
        throughput_tok_per_s: 0,
        total_requests: 4,
      },
    ],
  },
};

/** GET /api/v1/provider/me/earnings/history?duration=24h&bucket=1h (platform_data.go PlatformEarningsHistory). */
export const EARNINGS_HISTORY = {
  points: [
    {
      timestamp: '2026-11-30T21:00:00Z',
      usd: 0.3,
      pay_as_you_go_usd: 0.2,
      subscription_usd: 0.1,
      tokens_in: 10_000,
      tokens_out: 20_000,
      requests: 60,
      models: {},
    },
    { timestamp: '2026-11-30T22:00:00Z', usd: 0.1321, pay_as_you_go_usd: 0.1321, subscription_usd: 0, tokens_in: 14_000, tokens_out: 16_000, requests: 60 },
  ],
  currency: 'USD',
  bucket_seconds: 3600,
  duration_seconds: 86_400,
  total_usd: 0.4321,
  total_pay_as_you_go_usd: 0.3321,
  total_subscription_usd: 0.1,
  subscription_pro_rate: { '2026-11': { ratio: 0.5, settled: false, determined: false } },
};

/** The collateral contract as the Go CLI's CollateralChainInfo reads it (a testnet chain). */
export const COLLATERAL_CONTRACT = {
  chains: [
    {
      chain_id: 20241133,
      chain_name: 'Swan Proxima Testnet',
      contract_address: '0x1111111111111111111111111111111111111111',
      token_address: '0x2222222222222222222222222222222222222222',
      token_symbol: 'SWAN',
      token_decimals: 18,
      min_collateral: 100,
      rpc_url: 'https://rpc-proxima.swanchain.io',
      explorer_url: 'https://proxima-explorer.swanchain.io',
      faucet_url: 'https://faucet.swanchain.io',
    },
  ],
};

/** The provider record behind GET/PUT /api/v1/provider/me and the approval request. */
export interface AccountState {
  id: string;
  owner_address: string;
  worker_address: string;
  beneficiary_address: string;
  approvalRequests: Array<{ provider_name: string; hardware_summary: string; contact_email: string }>;
  puts: Array<Record<string, unknown>>;
  /** The next this many GETs show no owner address (a record read before another console set it). */
  staleOwnerReads: number;
}

export class PlatformApi {
  readonly hits: Array<{ path: string; auth?: string; method?: string; query?: string }> = [];
  readonly account: AccountState = {
    id: 'p1',
    owner_address: '',
    worker_address: '',
    beneficiary_address: '',
    approvalRequests: [],
    puts: [],
    staleOwnerReads: 0,
  };
  routes: Record<string, RouteBehaviour> = {
    '/api/v1/stats/model-demand': { kind: 'json', body: MODEL_DEMAND },
    '/api/v1/provider/me/stats': { kind: 'json', body: { data: ME_STATS } },
    '/api/v1/provider/status': { kind: 'json', body: PROVIDER_STATUS_ACTIVE },
    '/api/v1/providers/p1/models/details': { kind: 'json', body: MODEL_DETAILS },
    '/api/v1/provider/me/earnings/history': { kind: 'json', body: EARNINGS_HISTORY },
    '/api/v1/provider/collateral/contract': { kind: 'json', body: COLLATERAL_CONTRACT },
  };
  private readonly hanging = new Set<http.ServerResponse>();

  private constructor(
    private readonly server: http.Server,
    readonly key: string,
  ) {
    server.on('request', (req, res) => this.handle(req, res));
  }

  static start(key: string, port = 0): Promise<PlatformApi> {
    const server = http.createServer();
    const api = new PlatformApi(server, key);
    return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(api)));
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  count(p: string): number {
    return this.hits.filter((h) => h.path === p).length;
  }

  close(): Promise<void> {
    for (const r of this.hanging) r.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const p = (req.url ?? '/').split('?')[0]!;
    const query = (req.url ?? '').split('?')[1];
    this.hits.push({
      path: p,
      method: req.method ?? 'GET',
      ...(req.headers.authorization ? { auth: req.headers.authorization } : {}),
      ...(query ? { query } : {}),
    });
    if (this.routes[p] === undefined && (p === '/api/v1/provider/me' || p === '/api/v1/provider/request-approval')) return void this.handleAccount(p, req, res);
    const route = this.routes[p];
    if (!route || req.method !== 'GET') return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"code":404,"message":"not found"}');
    if (
      (p.startsWith('/api/v1/provider/') || p.startsWith('/api/v1/providers/')) &&
      p !== '/api/v1/provider/collateral/contract' &&
      req.headers.authorization !== `Bearer ${this.key}`
    ) {
      return void res.writeHead(401, { 'content-type': 'application/json' }).end('{"code":401,"message":"invalid api key"}');
    }
    switch (route.kind) {
      case 'json': {
        const send = (): void => void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(route.body));
        if (route.delayMs) setTimeout(send, route.delayMs);
        else send();
        return;
      }
      case 'status':
        return void res.writeHead(route.status, { 'content-type': 'text/plain' }).end(route.body ?? '');
      case 'raw':
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(route.text);
      case 'hang':
        this.hanging.add(res);
        return;
    }
  }

  /** The provider's account: its addresses (the owner's set once) and the approval request. */
  private async handleAccount(p: string, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const send = (status: number, body: unknown): void => void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (req.headers.authorization !== `Bearer ${this.key}`) return send(401, { error: { message: 'invalid api key' } });
    const a = this.account;
    const stale = req.method === 'GET' && a.staleOwnerReads > 0 && a.staleOwnerReads-- > 0;
    const me = (): unknown => ({
      data: { id: a.id, owner_address: stale ? '' : a.owner_address, worker_address: a.worker_address, beneficiary_address: a.beneficiary_address },
    });
    let body: Record<string, unknown> = {};
    if (req.method !== 'GET') {
      try {
        body = JSON.parse(await readBody(req)) as Record<string, unknown>;
      } catch {
        return send(400, { error: { message: 'invalid JSON body' } });
      }
    }
    const addr = (v: unknown): v is string => typeof v === 'string' && /^0x[0-9a-fA-F]{40}$/.test(v);
    if (p === '/api/v1/provider/me' && req.method === 'GET') return send(200, me());
    if (p === '/api/v1/provider/me' && req.method === 'PUT') {
      a.puts.push(body);
      if (body.owner_address !== undefined) {
        if (a.owner_address) return send(409, { error: { message: 'owner address is already set and cannot be changed' } });
        if (!addr(body.owner_address)) return send(400, { error: { message: 'invalid owner_address' } });
        a.owner_address = body.owner_address;
      }
      if (body.beneficiary_address !== undefined) {
        if (!addr(body.beneficiary_address)) return send(400, { error: { message: 'invalid beneficiary_address' } });
        a.beneficiary_address = body.beneficiary_address;
      }
      return send(200, me());
    }
    if (p === '/api/v1/provider/request-approval' && req.method === 'POST') {
      if (a.approvalRequests.length > 0) return send(409, { error: { message: 'an approval request is already pending' } });
      a.approvalRequests.push({
        provider_name: String(body.provider_name ?? ''),
        hardware_summary: String(body.hardware_summary ?? ''),
        contact_email: String(body.contact_email ?? ''),
      });
      return send(200, { provider_id: a.id, status: 'under_review', message: 'Your approval request was submitted.', requested_at: '2026-12-06T05:00:00Z' });
    }
    return send(405, { error: { message: 'method not allowed' } });
  }
}
