// A route the console serves beside the UI and the bridge, with its own credentials: the fleet API
// (fleet-api.ts: the console token or a read-only fleet token in the Authorization header). The server
// has already checked the request target and the Host header when a route is asked to answer; the route
// decides who may read it. A fleet token is never a console credential: the bridge and the UI refuse it.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Credential } from './auth';

export interface ConsoleRouteContext {
  /** The console's own credential on this request (token, session cookie; never a one-time code), or null. */
  consoleCredential(): Credential | null;
  /** A new one-time code: `/?code=…` opens one browser session on this console, once (auth.ts). */
  newCode(): string;
  /** The console's security headers for this answer. */
  headers: Record<string, string>;
}

export interface ConsoleRoute {
  /** Whether this route answers the path. */
  matches(pathname: string): boolean;
  handle(req: IncomingMessage, res: ServerResponse, url: URL, ctx: ConsoleRouteContext): Promise<void>;
}
