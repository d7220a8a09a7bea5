// Issue 42, Low: one address policy for the console, the CLI and config. `init --host`, `engines --host` and
// config's EngineHosts probed (and init stored) link-local and metadata addresses the console refuses when an
// endpoint is added there; `*.localhost` names were classed loopback without being resolved. Now every
// owner-given engine address is classed as the console classes one, the name resolved first: never probed,
// never written to EngineHosts.
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { enginesCommand } from '../../src/cli/engines-command';
import { initCommand } from '../../src/cli/init';
import { EngineDiscovery } from '../../src/core/engine-client/discovery';
import { REFUSED_ADDRESS_TEXT } from '../../src/core/http/address-class';
import { tempHome } from '../support/stack';

const METADATA = ['http://169.254.169.254', 'http://[::ffff:a9fe:a9fe]:80', 'http://[fe80::1]:8000', 'http://0.0.0.0:8000', 'http://100.100.100.200'];
const homes: string[] = [];
afterAll(() => {
  for (const h of homes) fs.rmSync(h, { recursive: true, force: true });
});

describe("owner-given engine addresses follow the console's policy", () => {
  it('`engines --host` never probes a link-local or metadata address, in any spelling', async () => {
    const stdout = new PassThrough();
    let text = '';
    stdout.on('data', (d: Buffer) => (text += d.toString()));
    await enginesCommand({ json: true, hosts: METADATA, probeUrls: [], timeoutMs: 3000, stdout, stderr: new PassThrough() });
    const engines = JSON.parse(text) as Array<{ url: string; error?: string }>;
    expect(engines).toHaveLength(METADATA.length);
    for (const e of engines) expect(e.error, e.url).toBe(REFUSED_ADDRESS_TEXT);
  });

  it('a name is resolved before it is classed: metadata.localhost pointing at 169.254.169.254 is refused', async () => {
    const list = await new EngineDiscovery({
      hosts: ['http://metadata.localhost:8000'],
      probeUrls: [],
      intervalMs: 0,
      resolve: async () => ['169.254.169.254'],
    }).rescan();
    expect(list.map((e) => e.error)).toEqual([REFUSED_ADDRESS_TEXT]);
  });

  it('`init --host` writes no refused address to EngineHosts', async () => {
    const home = tempHome('swan-init-policy-');
    homes.push(home);
    const err = process.stderr.write;
    const out = process.stdout.write;
    process.stderr.write = (() => true) as typeof process.stderr.write;
    process.stdout.write = (() => true) as typeof process.stdout.write;
    try {
      expect(await initCommand({ home, host: ['http://169.254.169.254:80', 'http://127.0.0.1:9'], probeUrls: [] })).toBe(0);
    } finally {
      process.stderr.write = err;
      process.stdout.write = out;
    }
    const config = fs.readFileSync(path.join(home, 'config.toml'), 'utf8');
    expect(config).not.toContain('169.254.169.254');
    expect(config).toContain('127.0.0.1:9');
  });
});
