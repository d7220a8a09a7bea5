// Redaction of the configured secret values themselves, not only of key-shaped text: a provider key in
// any format, engine api_keys from models.json and gateway keys never reach the log ring, the JSON log
// file, the terminal or the support bundle — through a real Agent (real dev hub, real log file).
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentLog } from '../../../src/core/base/log';
import { logEntries, registered, startStack, type Stack } from '../../support/stack';
import { createGatewayKey } from '../../support/approvals';

const PROVIDER_KEY = 'PastedKey.0123456789abcdef'; // not sk- shaped: the pattern alone misses it
const ENGINE_KEY = 'engine_secret_ZXCVBNM_42';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({
    key: PROVIDER_KEY,
    hub: { token: PROVIDER_KEY },
    engines: [{ apiKey: ENGINE_KEY }],
    models: { m: { engine: 0, api_key: ENGINE_KEY } },
  });
  await registered(stack);
});
afterAll(async () => {
  await stack?.close();
});

describe('configured secrets are redacted by value', () => {
  it('an AgentLog redacts the values it was given, in the ring, the file and on the terminal', () => {
    const file = path.join(stack.home, 'logs', 'unit.jsonl');
    const log = new AgentLog({ file, console: false });
    log.addSecrets([PROVIDER_KEY, 'ab', '']); // too-short values are ignored (they would shred every line)
    log.child('hub').warn(`the hub echoed ${PROVIDER_KEY} back`, { detail: `key=${PROVIDER_KEY}` });
    log.flush();
    expect(log.entries()[0]!.msg).toBe('the hub echoed [redacted] back');
    expect(log.redactText(`x ${PROVIDER_KEY} y ab`)).toBe('x [redacted] y ab');
    return expect
      .poll(() => fs.readFileSync(file, 'utf8'))
      .toContain('[redacted]')
      .then(() => {
        expect(fs.readFileSync(file, 'utf8')).not.toContain(PROVIDER_KEY);
      });
  });

  it('the agent redacts its provider key, engine api_keys and gateway keys wherever they show up', async () => {
    const created = await createGatewayKey(stack.agent, 'laptop');
    const l = stack.log.child('test');
    l.warn(`hub error text: ${PROVIDER_KEY}`);
    l.warn(`engine said: bad key ${ENGINE_KEY}`);
    l.warn(`client sent ${created.key}`);
    const ring = JSON.stringify(await logEntries(stack.agent, 5000));
    for (const s of [PROVIDER_KEY, ENGINE_KEY, created.key]) expect(ring).not.toContain(s);
    const bundle = (await stack.agent.invoke('logs.bundle', {})) as string;
    for (const s of [PROVIDER_KEY, ENGINE_KEY, created.key]) expect(bundle).not.toContain(s);
    expect(bundle).toContain('[redacted]');
  });

  it('a key saved in Settings is redacted from then on', async () => {
    const next = 'AnotherFormat-KEY-99887766';
    expect(await stack.agent.invoke('settings.save', { patch: { providerKey: next } })).toEqual({ ok: true });
    stack.log.child('test').warn(`echo ${next}`);
    expect(JSON.stringify(await logEntries(stack.agent, 50))).not.toContain(next);
  });

  it('credentials inside URLs are redacted by pattern', () => {
    const log = new AgentLog({ console: false });
    expect(log.redactText('dial ws://user:hunter2@hub.example/ws failed')).toBe('dial ws://[redacted]@hub.example/ws failed');
  });
});
