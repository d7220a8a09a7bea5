// Serves the built renderer (out/renderer) with a strict Content-Security-Policy: scripts and styles only
// from this origin, no inline scripts, network access only back to this same host.
import fs from 'node:fs';
import path from 'node:path';
import type { ServerResponse } from 'node:http';
import { contentSecurityPolicy as sharedPolicy } from '../../shared/csp';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

/** The one UI policy (src/shared/csp.ts) plus this console's own WebSocket origin. */
export function contentSecurityPolicy(host: string): string {
  return sharedPolicy({ socketHost: host });
}

export function securityHeaders(host: string): Record<string, string> {
  return {
    'Content-Security-Policy': contentSecurityPolicy(host),
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'X-Frame-Options': 'DENY',
    'Cache-Control': 'no-store',
  };
}

/** Resolves a URL path inside `root`, or null when it would escape it or names no file. */
export function resolveStatic(root: string, urlPath: string): string | null {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  if (decoded.includes('\0')) return null;
  // Source maps are never served (a build may still hold some): they would publish the sources.
  if (/\.map$/i.test(decoded)) return null;
  const rel = decoded === '/' || decoded === '' ? 'index.html' : decoded.replace(/^\/+/, '');
  const full = path.resolve(root, rel);
  const base = path.resolve(root);
  if (full !== base && !full.startsWith(base + path.sep)) return null;
  try {
    return fs.statSync(full).isFile() ? full : null;
  } catch {
    return null;
  }
}

export function sendFile(res: ServerResponse, file: string, headers: Record<string, string>, head = false): void {
  const type = TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
  const size = fs.statSync(file).size;
  res.writeHead(200, { ...headers, 'Content-Type': type, 'Content-Length': String(size) });
  if (head) {
    res.end();
    return;
  }
  const stream = fs.createReadStream(file);
  stream.on('error', () => res.destroy());
  stream.pipe(res);
}
