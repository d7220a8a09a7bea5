// The engine metadata reads locate.ts makes (GET /props, /v1/models, /info, /get_model_info; POST
// /api/show), with the engine's key, a timeout, a size cap and the bounded JSON reader.
import http from 'node:http';
import https from 'node:https';
import { httpGet, jsonObject } from '../engine/http-get';
import { JSON_LIMITS, parseJson } from '../http/bounded-json';
import type { EngineReader } from './locate';

const MAX_BODY = 4 * 1024 * 1024;

const base = (url: string): string => url.replace(/\/+$/, '').replace(/\/v1$/, '');
const auth = (apiKey?: string): Record<string, string> => (apiKey ? { authorization: `Bearer ${apiKey}` } : {});

export function engineReader(timeoutMs = 5000): EngineReader {
  return {
    get: async (url, path, apiKey) => jsonObject(await httpGet(`${base(url)}${path}`, timeoutMs, auth(apiKey))),
    post: (url, path, body, apiKey) => postJson(`${base(url)}${path}`, body, timeoutMs, auth(apiKey)),
  };
}

function postJson(url: string, body: unknown, timeoutMs: number, headers: Record<string, string>): Promise<Record<string, unknown> | undefined> {
  return new Promise((resolve) => {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return resolve(undefined);
    }
    const text = JSON.stringify(body);
    const lib = u.protocol === 'https:' ? https : http;
    let settled = false;
    const done = (v: Record<string, unknown> | undefined): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      resolve(v);
    };
    const req = lib.request(u, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers } }, (res) => {
      const parts: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_BODY) done(undefined);
        else parts.push(c);
      });
      res.on('end', () => {
        if ((res.statusCode ?? 0) < 200 || (res.statusCode ?? 0) >= 300) return done(undefined);
        try {
          const v = parseJson(Buffer.concat(parts), JSON_LIMITS.engine);
          done(v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined);
        } catch {
          done(undefined);
        }
      });
      res.on('error', () => done(undefined));
    });
    const timer = setTimeout(() => done(undefined), timeoutMs);
    req.on('error', () => done(undefined));
    req.end(text);
  });
}
