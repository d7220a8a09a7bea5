// `swan-provider doctor`: checks config, key format, hub reachability and engines, and says what to fix.
import fs from 'node:fs';
import path from 'node:path';
import WebSocket from 'ws';
import { ConfigError, hubDialUrl, loadConfig } from '../core/config/config';
import { checkEndpoint } from '../core/engine/health';
import { describeStatus, fetchProviderStatus, statusView } from '../core/hub/provider-status';
import { noConfigHelp } from './run';

type Check = { ok: boolean; what: string; fix?: string };

function dialOnce(url: string, timeoutMs = 5000): Promise<string | undefined> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { handshakeTimeout: timeoutMs });
    ws.on('open', () => {
      ws.close();
      resolve(undefined);
    });
    ws.on('unexpected-response', (_q, res) => {
      resolve(`HTTP ${res.statusCode}`);
      ws.terminate();
    });
    ws.on('error', (e) => resolve(e.message));
  });
}

export async function doctorCommand(o: { home: string; config?: string }): Promise<number> {
  const configPath = path.resolve(o.config ?? path.join(o.home, 'config.toml'));
  const checks: Check[] = [];
  if (!fs.existsSync(configPath)) {
    process.stdout.write(`✗ ${noConfigHelp(configPath, o.home)}\n`);
    return 1;
  }
  let cfg;
  try {
    cfg = loadConfig(configPath);
    checks.push({ ok: true, what: `config ${configPath} reads fine (${Object.keys(cfg.modelEntries).length} model(s) in models.json)` });
  } catch (e) {
    const msg = e instanceof ConfigError ? e.message : (e as Error).message;
    process.stdout.write(`✗ config: ${msg}\n`);
    return 1;
  }
  const key = cfg.apiKey;
  if (!key) checks.push({ ok: false, what: 'no provider key', fix: 'set ApiKey in [Inference] or INFERENCE_API_KEY (or paste it in the console)' });
  else if (!/^[\w.-]{8,256}$/.test(key)) checks.push({ ok: false, what: 'the provider key has an unexpected format', fix: 'copy it again, without spaces or quotes' });
  else checks.push({ ok: true, what: `provider key set (${key.slice(0, 8)}…)` });
  if (key) {
    // The platform's provider status decides whether the agent connects (api_key_valid, can_connect).
    const v = statusView(`${cfg.serviceUrl.replace(/\/+$/, '')}/api/v1/provider/status`, await fetchProviderStatus(cfg.serviceUrl, key));
    const lines = describeStatus(v).map((l) => `\n    ${l}`).join('');
    if (v.state === 'invalid_key') checks.push({ ok: false, what: `provider status at ${v.url}: the key is not valid${lines}`, fix: 'copy the key again from your Swan Inference provider page (the agent does not connect with this one)' });
    else if (v.state === 'waiting') checks.push({ ok: false, what: `provider status at ${v.url}: this provider cannot connect yet${lines}`, fix: 'follow the next steps above; the agent re-checks every minute and connects once approved' });
    else if (v.state === 'unreachable') checks.push({ ok: false, what: `provider status at ${v.url} could not be read: ${v.error ?? 'no answer'}`, fix: 'check ServiceURL and your connection (the agent connects anyway)' });
    else checks.push({ ok: true, what: `provider status at ${v.url}: can connect${lines}` });
  }
  const dial = hubDialUrl(cfg.webSocketUrl);
  const err = await dialOnce(dial.url);
  checks.push(err ? { ok: false, what: `hub ${dial.url} not reachable: ${err}`, fix: 'check WebSocketURL and your connection' } : { ok: true, what: `hub ${dial.url} answers` });
  for (const [model, entry] of Object.entries(cfg.modelEntries)) {
    const h = await checkEndpoint(entry.endpoint.replace(/\/v1\/?$/, ''), 5000);
    checks.push(h.ok ? { ok: true, what: `engine for ${model} at ${entry.endpoint} answers` } : { ok: false, what: `engine for ${model} at ${entry.endpoint}: ${h.error}`, fix: 'start the engine or fix the endpoint in models.json' });
  }
  for (const c of checks) process.stdout.write(`${c.ok ? '✓' : '✗'} ${c.what}${c.fix ? `\n    → ${c.fix}` : ''}\n`);
  const bad = checks.filter((c) => !c.ok).length;
  process.stdout.write(bad ? `${bad} problem(s) found.\n` : 'All good.\n');
  return bad ? 1 : 0;
}
