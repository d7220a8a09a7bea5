// A rig's console as `swan-provider run --console … --metrics` serves it: the console server with the
// agent as its bridge, /metrics, and the fleet API route. For tests of one rig reading another.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { Agent } from '../../src/core/agent';
import { fleetApiRoute } from '../../src/core/console/fleet-api';
import { startConsoleServer, type ConsoleServer } from '../../src/core/console/server';

export async function startRigConsole(agent: Agent, o: { token?: string; port?: number } = {}): Promise<ConsoleServer & { staticDir: string }> {
  const staticDir = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-fleet-ui-'));
  fs.writeFileSync(path.join(staticDir, 'index.html'), '<!doctype html><title>Swan</title>');
  const server = await startConsoleServer({
    backend: agent,
    port: o.port ?? 0,
    staticDir,
    ...(o.token ? { token: o.token } : {}),
    ...(agent.metrics ? { metrics: () => agent.metrics!.text() } : {}),
    routes: [fleetApiRoute({ source: agent.fleet.api, tokens: agent.fleet.tokens })],
  });
  const close = server.close.bind(server);
  return Object.assign(server, {
    staticDir,
    close: async () => {
      await close();
      fs.rmSync(staticDir, { recursive: true, force: true });
    },
  });
}

export interface HttpAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One HTTP request to 127.0.0.1:port with the Host a client of that address sends. */
export function request(port: number, method: string, pathName: string, headers: Record<string, string> = {}, body?: string): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method,
        path: pathName,
        agent: false,
        headers: { host: `127.0.0.1:${port}`, ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}), ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

export const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });
