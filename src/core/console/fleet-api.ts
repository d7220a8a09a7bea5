// The fleet API: how another rig's console reads this one. Read-only HTTP JSON under /api/fleet/v1/,
// served on the console's address. Credentials go in the Authorization header only (a token in an
// address ends up in proxy logs, shell history and the browser's history): the console token (`full`)
// or a fleet token (`read`, src/core/fleet/tokens.ts). Every route is a GET that reads, except
// console-link, which makes a one-time sign-in code for this console and needs the console token: a
// fleet token can read the figures and nothing else. A fleet token is never a console credential either,
// so the bridge (every verb that changes settings, keys or models) refuses it (console/auth.ts).
//
//   GET  /api/fleet/v1/summary       RigSummary (src/shared/fleet.ts)
//   GET  /api/fleet/v1/usage         RigUsage
//   GET  /api/fleet/v1/metrics       the Prometheus text of /metrics (when metrics are on), for scrapers
//                                    that should hold a read-only token rather than the console token
//   POST /api/fleet/v1/console-link  {path: "/?code=…"} (console token only)
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FleetAccess } from '../../shared/fleet';
import type { FleetApiSource } from '../fleet/fleet';
import type { FleetTokens } from '../fleet/tokens';
import type { Logger } from '../base/log';
import type { ConsoleRoute, ConsoleRouteContext } from './console-route';

export const FLEET_API_PREFIX = '/api/fleet/v1/';

/** Stable codes of the fleet API's refusals (the `code` of its JSON error bodies). */
export type FleetApiErrorCode = 'unauthorized' | 'token_in_url' | 'read_only' | 'method_not_allowed' | 'not_found' | 'metrics_off' | 'failed';

export interface FleetApiOptions {
  source: FleetApiSource;
  tokens: FleetTokens;
  log?: Logger;
}

function bearer(req: IncomingMessage): string | undefined {
  const h = req.headers.authorization;
  return h?.startsWith('Bearer ') ? h.slice(7).trim() : undefined;
}

/** Largest request body read (and thrown away: the fleet API takes none) before answering. */
const MAX_IGNORED_BODY = 64 * 1024;

/** Reads a request's body to its end, so the answer is not followed by the body parsed as another request. */
function drain(req: IncomingMessage): Promise<void> {
  return new Promise((resolve) => {
    if (req.readableEnded || (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined)) return resolve();
    let size = 0;
    req.on('data', (d: Buffer) => {
      size += d.length;
      if (size > MAX_IGNORED_BODY) {
        req.destroy();
        resolve();
      }
    });
    req.on('end', resolve);
    req.on('error', () => resolve());
  });
}

function send(res: ServerResponse, ctx: ConsoleRouteContext, status: number, body: unknown, extra: Record<string, string> = {}): void {
  res.writeHead(status, { ...ctx.headers, 'Content-Type': 'application/json; charset=utf-8', ...extra });
  res.end(JSON.stringify(body));
}

function refuse(
  res: ServerResponse,
  ctx: ConsoleRouteContext,
  status: number,
  code: FleetApiErrorCode,
  error: string,
  extra: Record<string, string> = {},
): void {
  send(res, ctx, status, { code, error }, extra);
}

export function fleetApiRoute(o: FleetApiOptions): ConsoleRoute {
  /** Who is asking: the console token (full), a fleet token (read), or nobody. */
  const access = (req: IncomingMessage, ctx: ConsoleRouteContext): FleetAccess | undefined => {
    if (ctx.consoleCredential() === 'token-header') return 'full';
    return o.tokens.verify(bearer(req)) ? 'read' : undefined;
  };

  return {
    matches: (pathname) => pathname === FLEET_API_PREFIX.slice(0, -1) || pathname.startsWith(FLEET_API_PREFIX),
    async handle(req, res, url, ctx) {
      await drain(req);
      if (url.searchParams.has('token') || url.searchParams.has('code')) {
        return refuse(
          res,
          ctx,
          400,
          'token_in_url',
          'Send the token in the Authorization header ("Authorization: Bearer …"), never in the address: addresses end up in logs and histories.',
        );
      }
      const who = access(req, ctx);
      if (!who) {
        return refuse(
          res,
          ctx,
          401,
          'unauthorized',
          'A console token or a fleet token is needed, as "Authorization: Bearer <token>". Make a read-only one on this rig with `swan-provider fleet token create`.',
          {
            'WWW-Authenticate': 'Bearer realm="swan-provider fleet"',
          },
        );
      }
      const route = url.pathname.slice(FLEET_API_PREFIX.length);
      const method = req.method ?? 'GET';
      try {
        if (route === 'console-link') {
          if (method !== 'POST') return refuse(res, ctx, 405, 'method_not_allowed', 'console-link takes POST.', { Allow: 'POST' });
          if (who !== 'full')
            return refuse(res, ctx, 403, 'read_only', 'A fleet token reads this rig and nothing more; opening its console signed in takes the console token.');
          return send(res, ctx, 200, { path: `/?code=${ctx.newCode()}` });
        }
        const reads: Record<string, () => Promise<unknown>> = {
          summary: async () => o.source.summary(who),
          usage: () => o.source.usage(),
        };
        if (route === 'metrics') {
          if (method !== 'GET') return refuse(res, ctx, 405, 'method_not_allowed', 'The fleet API only reads: use GET.', { Allow: 'GET' });
          if (!o.source.metrics) return refuse(res, ctx, 404, 'metrics_off', 'Metrics are off on this rig: start it with `swan-provider run --metrics`.');
          const text = await o.source.metrics();
          res.writeHead(200, { ...ctx.headers, 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8' });
          return void res.end(text);
        }
        const read = Object.hasOwn(reads, route) ? reads[route] : undefined;
        if (!read) return refuse(res, ctx, 404, 'not_found', `No such fleet API route: ${url.pathname}.`);
        if (method !== 'GET') return refuse(res, ctx, 405, 'method_not_allowed', 'The fleet API only reads: use GET.', { Allow: 'GET' });
        send(res, ctx, 200, await read());
      } catch (err) {
        o.log?.warn(`fleet api: ${url.pathname} failed: ${(err as Error).message}`);
        refuse(res, ctx, 500, 'failed', 'This rig could not collect its figures; see its log.');
      }
    },
  };
}
