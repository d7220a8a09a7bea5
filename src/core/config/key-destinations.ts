// Which hosts each provider key was approved for. A key moves only with the owner's word for
// that key and that host: a key typed in the console counts for itself only, so a decoy key typed with an
// attacker's address, then cleared, does not carry the key underneath (config.toml's ApiKey) to that address.
// Kept as (SHA-256 of the key, host:port) pairs in <home>/key-destinations.json (0600, the one atomic
// writer). The hosts config.toml names are the owner's own file and count for the keys the owner put in
// config.toml or the environment. A home that never had this file trusts what is in use at the first start
// with it (the owner ran it so before); from then on, only what the owner allowed.
import { z } from 'zod';
import { credentialHash } from './credential-file';
import { homePath } from './home-layout';
import { SharedJsonFile } from './shared-json-file';

const pair = z.object({ key: z.string().regex(/^[0-9a-f]{64}$/), host: z.string().min(1).max(300), at: z.number() });
const stored = z.object({ pairs: z.array(pair).max(10_000) });
type Stored = z.infer<typeof stored>;

/** Pairs kept at most: the oldest approvals go first (a key approved long ago is approved again once). */
const MAX_PAIRS = 256;

/** The host (host:port, lower case) a key is sent to at `url`, or undefined for an empty or unparsable one. */
export function keyHost(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    const u = new URL(url);
    return u.host ? u.host.toLowerCase() : undefined;
  } catch {
    return undefined;
  }
}

export class KeyDestinations {
  private readonly file: SharedJsonFile<Stored>;

  constructor(
    home: string,
    private readonly now: () => number = Date.now,
  ) {
    this.file = new SharedJsonFile(homePath(home, 'keyDestinations'), stored, () => ({ pairs: [] }));
  }

  /** Whether the file exists (a home that never had it trusts what is in use once: `seed`). */
  exists(): boolean {
    this.file.read();
    return this.file.stamp() !== 'absent';
  }

  has(key: string, host: string): boolean {
    const k = credentialHash(key);
    const h = host.toLowerCase();
    return this.file.read().value.pairs.some((p) => p.key === k && p.host === h);
  }

  /**
   * The first start with this file: what is in use is trusted once (the owner ran it so). Written even with
   * no key, so a key that arrives later (config.toml edited) is checked against the addresses then in use.
   */
  seed(key: string, hosts: string[]): void {
    if (this.exists()) return;
    if (key && hosts.length > 0) this.approve(key, hosts);
    else this.file.write({ pairs: [] });
  }

  /** Records the owner's word: `key` may go to each of `hosts`. */
  approve(key: string, hosts: string[]): void {
    if (!key || hosts.length === 0) return;
    const k = credentialHash(key);
    const fresh = hosts.map((h) => h.toLowerCase());
    const kept = this.file.read().value.pairs.filter((p) => !(p.key === k && fresh.includes(p.host)));
    const pairs = [...kept, ...fresh.map((host) => ({ key: k, host, at: this.now() }))].slice(-MAX_PAIRS);
    this.file.write({ pairs });
  }
}
