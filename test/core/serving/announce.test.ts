// The Announcer: declarations are built when a register is sent, heartbeats carry that very list (Go's
// TestDeclarationHashIsCachedUntilReregister), and a fact learnt later is registered again — also when it
// was learnt while no register could go (the link down or still registering).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Announcer } from '../../../src/core/serving/announce';
import { ModelRegistry } from '../../../src/core/models/registry';
import { loadConfig, type ProviderConfig } from '../../../src/core/config/config';
import type { Identity } from '../../../src/core/config/identity';
import { ContextLengths } from '../../../src/core/engine-client/context-length';
import type { RegisterPayload } from '../../../src/core/protocol/messages';
import { writeConfigToml } from '../../support/config-toml';

let dir: string;
let config: ProviderConfig;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-announce-'));
  writeConfigToml(dir, { Inference: { WebSocketURL: 'ws://127.0.0.1:9', ApiKey: 'sk-prov-x' } });
  config = loadConfig(path.join(dir, 'config.toml'), {});
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function world() {
  const registry = new ModelRegistry();
  registry.rebuild({ entries: { 'org/m': { endpoint: 'http://127.0.0.1:9' } }, configModels: [], engines: [], prefs: {} });
  const hashes = new Map<string, string>();
  const sent: RegisterPayload[] = [];
  let connected = true;
  const a: Announcer = new Announcer({
    identity: { nodeId: `04${'a'.repeat(128)}` } as Identity,
    config,
    version: '9.9.9',
    registry,
    contexts: new ContextLengths(),
    announced: () => registry.announced(),
    announcedHealth: () => registry.healthMap(),
    gpu: () => ({ gpus: [], detectedAt: 1 }),
    nodeName: () => 'n',
    providerKey: () => 'sk-prov-x',
    metrics: () => ({}),
    latestSample: () => null,
    // The link: a register goes only while connected (HubLink.reRegister).
    reRegister: () => {
      if (connected) sent.push(a.register());
    },
    weightHash: (id) => hashes.get(id),
  });
  return { a, hashes, sent, setConnected: (c: boolean) => (connected = c) };
}

describe('Announcer', () => {
  it('heartbeats carry the declarations of the last register until the next one', () => {
    const w = world();
    w.sent.push(w.a.register());
    expect(w.a.heartbeat().model_declarations).toEqual(w.sent[0]!.model_declarations);
    expect(w.a.heartbeat().model_declarations[0]!.weight_hash).toBeUndefined();
    w.hashes.set('org/m', 'ab'.repeat(32));
    // A heartbeat does not re-read: still the registered declarations.
    expect(w.a.heartbeat().model_declarations[0]!.weight_hash).toBeUndefined();
    w.a.announce();
    expect(w.sent).toHaveLength(2);
    expect(w.sent[1]!.model_declarations[0]).toMatchObject({ weight_hash: 'ab'.repeat(32), hash_algo: 'sha256' });
    expect(w.a.heartbeat().model_declarations[0]!.weight_hash).toBe('ab'.repeat(32));
    // Nothing changed: no register.
    w.a.announce();
    expect(w.sent).toHaveLength(2);
  });

  it('a fact learnt while no register could go is sent by the next announce, not lost', () => {
    const w = world();
    w.sent.push(w.a.register());
    w.setConnected(false);
    w.hashes.set('org/m', 'cd'.repeat(32));
    w.a.announce(); // the link is registering: nothing goes
    expect(w.sent).toHaveLength(1);
    w.setConnected(true);
    w.a.announce(); // the announce the agent makes once the link registered
    expect(w.sent).toHaveLength(2);
    expect(w.sent[1]!.model_declarations[0]!.weight_hash).toBe('cd'.repeat(32));
    expect(w.sent[1]!.model_hashes[0]).toMatchObject({ weight_hash: 'cd'.repeat(32), hash_algo: 'sha256' });
    expect(w.sent[1]).toMatchObject({ client: 'swan-provider-console', client_version: '9.9.9' });
  });
});
