// A provider key moves only with the owner's word, for that key and that host (issue 42): the pairs kept
// in <home>/key-destinations.json, config.toml's own hosts for its key and the environment's, the first start
// of a home that never had the file, and a key whose sources changed (the environment, config.toml) under
// addresses set in the console: held, never sent, until the owner allows it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/core/config/config';
import { KeyDestinations } from '../../../src/core/config/key-destinations';
import { networkStandIns } from '../../../src/core/config/network-stand-ins';
import { OwnerValues } from '../../../src/core/config/owner-values';
import { FileSecretStore } from '../../../src/core/config/secrets';
import { SettingsFile } from '../../../src/core/config/settings-file';
import { writeConfigToml } from '../../support/config-toml';

const homes: string[] = [];
afterEach(() => {
  for (const h of homes.splice(0)) fs.rmSync(h, { recursive: true, force: true });
});

function home(apiKey = 'sk-prov-config-key'): string {
  const h = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-keydest-'));
  homes.push(h);
  writeConfigToml(h, { Inference: { WebSocketURL: 'wss://hub.example/ws', ServiceURL: 'https://api.example', ApiKey: apiKey } });
  return h;
}

function values(h: string, env: NodeJS.ProcessEnv = {}): OwnerValues {
  return new OwnerValues(
    loadConfig(path.join(h, 'config.toml'), env),
    SettingsFile.in(h),
    new FileSecretStore(h),
    env,
    networkStandIns(env),
    new KeyDestinations(h),
  );
}

describe('key destinations', () => {
  it("config.toml's key goes to config.toml's hosts; the file is 0600 and holds no key", () => {
    const h = home();
    const v = values(h);
    expect(v.providerKey()).toBe('sk-prov-config-key');
    expect(v.keyHeld()).toEqual([]);
    const file = path.join(h, 'key-destinations.json');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(file, 'utf8')).not.toContain('sk-prov-config-key');
  });

  it('a host set in the console is allowed for the key it was allowed with, not for another key in use later', () => {
    const h = home();
    const v = values(h);
    v.settings.update((s) => ({ ...s, serviceUrl: 'http://127.0.0.1:9/attacker' }));
    v.secrets.set('providerKey', 'decoy-key-12345678');
    v.destinations!.approve('decoy-key-12345678', v.keyHosts());
    expect(v.providerKey()).toBe('decoy-key-12345678');
    // The decoy cleared: config.toml's key would go to the attacker's host, which nobody allowed for it.
    v.secrets.delete('providerKey');
    expect(v.keyInUse()).toBe('sk-prov-config-key');
    expect(v.keyHeld()).toEqual(['127.0.0.1:9']);
    expect(v.providerKey()).toBe('');
  });

  it('an environment key that changed under an address set in the console is held until the owner allows it', () => {
    const h = home();
    const first = values(h, { INFERENCE_API_KEY: 'sk-prov-env-one' });
    first.settings.update((s) => ({ ...s, hubUrl: 'wss://other-hub.example/ws' }));
    first.destinations!.approve('sk-prov-env-one', first.keyHosts());
    expect(first.providerKey()).toBe('sk-prov-env-one');
    const next = values(h, { INFERENCE_API_KEY: 'sk-prov-env-two' });
    expect(next.keyHeld()).toEqual(['other-hub.example']);
    expect(next.providerKey()).toBe('');
    next.destinations!.approve('sk-prov-env-two', next.keyHosts());
    expect(next.providerKey()).toBe('sk-prov-env-two');
  });

  it('a home that never had the file trusts what is in use at its first start, once', () => {
    const h = home();
    fs.writeFileSync(path.join(h, 'settings.json'), JSON.stringify({ serviceUrl: 'https://mirror.example' }));
    expect(values(h).providerKey()).toBe('sk-prov-config-key');
    // Written on that first start: later changes are checked against it.
    expect(fs.existsSync(path.join(h, 'key-destinations.json'))).toBe(true);
    expect(values(h, { INFERENCE_API_KEY: 'sk-prov-new-env' }).keyHeld()).toEqual(['mirror.example']);
  });

  it('a home first started without a key keeps that: a key added to config.toml later is checked against addresses set in the console meanwhile', () => {
    const h = home('');
    const first = values(h);
    expect(first.keyInUse()).toBe('');
    expect(fs.existsSync(path.join(h, 'key-destinations.json'))).toBe(true);
    // With no key saved, a session may point the service URL anywhere (nothing to protect then).
    first.settings.update((s) => ({ ...s, serviceUrl: 'http://127.0.0.1:9/elsewhere' }));
    writeConfigToml(h, { Inference: { WebSocketURL: 'wss://hub.example/ws', ServiceURL: 'https://api.example', ApiKey: 'sk-prov-added-later' } });
    const later = values(h);
    expect(later.keyHeld()).toEqual(['127.0.0.1:9']);
    expect(later.providerKey()).toBe('');
  });
});
