// A stand-in of Docker's Engine API (https://docs.docker.com/reference/api/engine/), on a unix socket, for
// the managed vLLM/SGLang containers: GET /_ping, GET /containers/{name}/json (404 when none), POST
// /containers/create?name=, POST /containers/{id}/start, GET /containers/{id}/logs?follow=1 (the multiplexed
// stream: an 8-byte header [stream, 0, 0, 0, size BE32] per frame), POST /containers/{id}/wait (answers
// {StatusCode} once the container ends), POST /containers/{id}/stop, DELETE /containers/{id}. A "running"
// container is a test engine listening on the published 127.0.0.1 port; `crash(name)` ends it as a crash would.
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestEngine, type TestEngine } from './engine-server';

export interface StandinContainer {
  id: string;
  name: string;
  body: Record<string, unknown>;
  labels: Record<string, string>;
  running: boolean;
  engine?: TestEngine;
  waiters: Array<(code: number) => void>;
  logs: Array<(line: string) => void>;
  /** Every line it logged (a logs request gets them first, as Docker's does). */
  history?: string[];
}

function frame(text: string): Buffer {
  const payload = Buffer.from(`${text}\n`);
  const h = Buffer.alloc(8);
  h[0] = 1;
  h.writeUInt32BE(payload.length, 4);
  return Buffer.concat([h, payload]);
}

export async function startDockerStandin(): Promise<{
  socketPath: string;
  containers: Map<string, StandinContainer>;
  crash(name: string): Promise<void>;
  close(): Promise<void>;
}> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-docker-'));
  const socketPath = path.join(dir, 'docker.sock');
  const containers = new Map<string, StandinContainer>();
  const find = (ref: string) => containers.get(ref) ?? [...containers.values()].find((c) => c.id === ref);
  const end = async (c: StandinContainer, code: number) => {
    if (!c.running) return;
    c.running = false;
    await c.engine?.close();
    c.engine = undefined;
    for (const w of c.waiters.splice(0)) w(code);
  };
  const server = http.createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://docker');
    const p = u.pathname.replace(/^\/v[\d.]+/, '');
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    let raw = '';
    req.on('data', (d: Buffer) => (raw += d.toString()));
    req.on('end', () => {
      void (async () => {
        if (p === '/_ping') return res.end('OK');
        if (req.method === 'POST' && p === '/containers/create') {
          const body = JSON.parse(raw) as Record<string, unknown>;
          const name = u.searchParams.get('name') ?? '';
          const id = `${Date.now().toString(16)}${Math.random().toString(16).slice(2)}`.padEnd(64, '0');
          containers.set(name, { id, name, body, labels: (body.Labels as Record<string, string>) ?? {}, running: false, waiters: [], logs: [] });
          return json(201, { Id: id, Warnings: [] });
        }
        const m = /^\/containers\/([^/]+)(?:\/(\w+))?$/.exec(p);
        const c = m ? find(decodeURIComponent(m[1]!)) : undefined;
        if (!m || !c) return json(404, { message: `No such container: ${m?.[1] ?? ''}` });
        const verb = m[2];
        if (req.method === 'GET' && verb === 'json')
          return json(200, { Id: c.id, Name: `/${c.name}`, Config: { Labels: c.labels, Image: c.body.Image }, State: { Running: c.running } });
        if (req.method === 'POST' && verb === 'start') {
          const bindings = (c.body.HostConfig as { PortBindings: Record<string, Array<{ HostPort: string }>> }).PortBindings;
          const hostPort = Number(Object.values(bindings)[0]![0]!.HostPort);
          const served = (c.body.Cmd as string[])[(c.body.Cmd as string[]).indexOf('--served-model-name') + 1]!;
          c.engine = await startTestEngine({ engineType: 'vllm', models: [served], port: hostPort });
          c.running = true;
          const line = `INFO: serving ${served} on port ${hostPort}`;
          (c.history ??= []).push(line);
          for (const l of c.logs) l(line);
          res.writeHead(204);
          return res.end();
        }
        if (req.method === 'GET' && verb === 'logs') {
          res.writeHead(200, { 'content-type': 'application/vnd.docker.multiplexed-stream' });
          res.write(frame(`container ${c.name} created`));
          for (const line of c.history ?? []) res.write(frame(line));
          c.logs.push((line) => res.write(frame(line)));
          c.waiters.push(() => res.end());
          return;
        }
        if (req.method === 'POST' && verb === 'wait') {
          if (!c.running) return json(200, { StatusCode: 0 });
          c.waiters.push((code) => json(200, { StatusCode: code }));
          return;
        }
        if (req.method === 'POST' && verb === 'stop') {
          await end(c, 143);
          res.writeHead(204);
          return res.end();
        }
        if (req.method === 'DELETE' && !verb) {
          await end(c, 137);
          containers.delete(c.name);
          res.writeHead(204);
          return res.end();
        }
        json(404, { message: 'not in this stand-in' });
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  return {
    socketPath,
    containers,
    crash: async (name) => {
      const c = containers.get(name);
      if (c) await end(c, 139);
    },
    close: async () => {
      for (const c of containers.values()) await end(c, 0);
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
