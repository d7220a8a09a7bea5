// Every engine call goes through the one engine-call service with a typed purpose, and every HTTP request
// to an engine leaves through the one engine HTTP client (src/core/engine-client/http.ts). Read from the source:
// a new call site with a purpose shows up here; a new http.request / fetch outside the client fails here
// unless it is listed below with what it talks to (none of them an engine).
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { POLICY, PURPOSES } from '../../../src/core/inference/purpose';
import { repoRoot } from '../../support/traces';

const SRC = path.join(repoRoot, 'src');

function files(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = path.join(dir, d.name);
    if (d.isDirectory()) return files(p);
    return /\.(ts|tsx)$/.test(d.name) ? [p] : [];
  });
}

const sources = files(SRC).map((file) => ({ file: path.relative(SRC, file).split(path.sep).join('/'), text: fs.readFileSync(file, 'utf8') }));

/** The code without its comments (a comment may name fetch or http.request). */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

describe('engine calls by purpose', () => {
  it('each purpose is used where the table says, and nowhere else', () => {
    const sites: Record<string, string[]> = {};
    for (const { file, text } of sources) {
      if (file === 'core/inference/purpose.ts') continue;
      for (const m of code(text).matchAll(/\bpurpose: '([a-z-]+)'/g)) {
        const list = (sites[m[1]!] ??= []);
        if (!list.includes(file)) list.push(file);
      }
    }
    for (const list of Object.values(sites)) list.sort();
    expect(sites).toEqual({
      hub: ['core/hub/relay.ts'],
      gateway: ['core/gateway/openai-http.ts', 'core/gateway/relay-ws.ts', 'core/gateway/stream-v1-run.ts'],
      try: ['core/bridge/console-extras.ts'],
      warmup: ['core/engines/warmup.ts'],
      'ollama-load': ['core/engines/warmup.ts'],
      verify: ['core/hub/challenges.ts'],
      benchmark: ['core/hub/challenges.ts'],
      health: ['core/inference/health-probe.ts'],
      'ollama-pull': ['core/accounting/accounting.ts'],
      'ollama-unload': ['core/engines/engines.ts'],
    });
    expect(Object.keys(sites).sort()).toEqual([...PURPOSES].sort());
  });

  it('the table: only hub traffic earns and counts in the heartbeat; only client traffic is retried and estimated', () => {
    const rows = Object.entries(POLICY);
    expect(rows.filter(([, p]) => p.source === 'hub').map(([k]) => k)).toEqual(['hub']);
    expect(rows.filter(([, p]) => p.heartbeat).map(([k]) => k)).toEqual(['hub']);
    expect(
      rows
        .filter(([, p]) => p.retry)
        .map(([k]) => k)
        .sort(),
    ).toEqual(['gateway', 'hub', 'try']);
    expect(
      rows
        .filter(([, p]) => p.estimates)
        .map(([k]) => k)
        .sort(),
    ).toEqual(['gateway', 'hub', 'try']);
    expect(
      rows
        .filter(([, p]) => !p.booked)
        .map(([k]) => k)
        .sort(),
    ).toEqual(['health', 'ollama-pull', 'ollama-unload']);
    expect(POLICY.health.admission).toBe('endpoint');
    expect(POLICY['ollama-pull'].admission).toBe('none');
    expect(POLICY['ollama-unload'].admission).toBe('none');
  });
});

describe('one HTTP client for engines', () => {
  /** Files that make HTTP requests to something that is not an engine, and what they talk to. */
  const NOT_ENGINES: Record<string, string> = {
    'core/engine-client/http.ts': 'the engine HTTP client itself',
    'core/platform/get-json.ts': "the platform's HTTP API (rates, stats, catalogue)",
    'core/hub/provider-status.ts': "the platform's provider status",
    'core/platform/model-details.ts': "the platform's records of each model (its fetch() method reads through get-json)",
    'core/platform/provider-account.ts': "the platform's provider account (addresses, approval, collateral): GET, PUT and POST, bounded",
    'core/update/check.ts': 'the update feed (npm registry or a generic feed)',
    'core/alerts/webhook.ts': "the owner's alert webhook",
    'core/downloads/download.ts': 'model files (the Swan model repository, the Hugging Face Hub): streamed to disk with Range',
    'core/downloads/huggingface.ts': "the Hugging Face Hub's file list (@huggingface/hub's listFiles, its fetch bounded)",
    'cli/demo.ts': "the demo's dev hub (its OpenAI API), for a trickle of traffic",
    'renderer/components/ExposureBanner.tsx': "the console server's /session",
    'renderer/bridge/ws-bridge.ts': "the console server's /session",
  };

  it('no http.request, http.get or fetch outside the client but to the services listed', () => {
    const found = sources
      .filter(({ text }) => /\b(https?|lib)\.(request|get)\(|\)\.request\(|(^|[^.\w])fetch\(/m.test(code(text)))
      .map(({ file }) => file)
      .sort();
    expect(found).toEqual(Object.keys(NOT_ENGINES).sort());
  });

  it('the only module that opens node:http(s) client requests is the engine client', () => {
    const importers = sources
      .filter(({ text }) => /^import (\w+|\{[^}]*\}) from 'node:https?';/m.test(text) && /\b(https?)\.(request|get|Agent)\b/.test(code(text)))
      .map(({ file }) => file);
    // downloads/download.ts streams model files to disk (Range, redirects): not an engine, and no engine call.
    expect(importers.sort()).toEqual(['core/downloads/download.ts', 'core/engine-client/http.ts']);
  });
});
