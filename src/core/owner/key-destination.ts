// Where the provider key goes. The agent sends the key to the hub URL (register) and the service URL (key
// check, provider status), so changing either is changing who receives the key. The rule for settings.save:
// - no key saved (none would be sent after the save): the change is saved at once — nothing to protect; a
//   plain ws:// / http:// address off this machine comes back as a warning;
// - a key saved, and the change would send it to a host it does not go to now, or over plain ws:// / http://
//   to another machine: the save needs the owner — the key typed again in the same patch (and it is the
//   key that will be sent: an INFERENCE_API_KEY in the environment wins over a typed one), or an approval
//   given outside the console (approvals.ts). Nothing the caller puts in the request counts as the
//   owner's word: whoever holds a console session, or borrowed one, can set any field.
// - "a host it does not go to now" is asked of the key that will be sent, for every host it will reach
//   after the save, changed in the patch or not: a key is allowed per key and host
//   (config/key-destinations.ts), so a decoy key typed with an attacker's address and then cleared does not
//   take the key underneath there.
import type { SettingsPatch } from '../../shared/bridge/schemas';
import { isLoopbackHost } from '../http/loopback';

export interface KeyDestinationInput {
  /** Where the key goes now. */
  current: { hubUrl: string; serviceUrl: string };
  patch: SettingsPatch;
  /** The provider key that would be sent after this save ('' when none). */
  keyAfter: string;
  /** Whether the patch types the very key that would be sent (the owner showed they hold it). */
  keyTyped: boolean;
  /**
   * Whether the owner allowed `keyAfter` to go to a host. When given, every host the key reaches after the
   * save is asked, changed in this patch or not; without it, the hosts in use now count as allowed.
   */
  approved?: (host: string) => boolean;
}

export interface KeyDestinationCheck {
  /** Hosts (host:port) the key would reach for the first time. */
  hosts: string[];
  /** Hosts the key would reach over plain ws:// / http:// off this machine, where it does not now. */
  insecure: string[];
  /** Per field: a plain ws:// / http:// address off this machine (saved, but said). */
  warnings: Record<string, string>;
  /** Whether the save needs the owner's approval. */
  needsOwner: boolean;
}

function parse(url: string): URL | undefined {
  try {
    return new URL(url);
  } catch {
    return undefined;
  }
}

const FIELDS = ['hubUrl', 'serviceUrl'] as const;

function plain(u: URL): boolean {
  return (u.protocol === 'ws:' || u.protocol === 'http:') && !isLoopbackHost(u.hostname);
}

/** The key that a save leaves in use: the environment's wins; a typed one replaces the stored one; '' removes it. */
export function keyAfterSave(k: { env: string; stored: string; config: string }, typed: string | undefined): { keyAfter: string; keyTyped: boolean } {
  const t = typed?.trim();
  if (t === undefined) return { keyAfter: k.env || k.stored || k.config, keyTyped: false };
  const keyAfter = k.env || t || k.config;
  return { keyAfter, keyTyped: t !== '' && keyAfter === t };
}

export function checkKeyDestination({ current, patch, keyAfter, keyTyped, approved }: KeyDestinationInput): KeyDestinationCheck {
  const now = FIELDS.map((f) => parse(current[f])).filter((u): u is URL => u !== undefined);
  const knownHosts = new Set(now.map((u) => u.host.toLowerCase()));
  const allowed = approved ?? ((host: string) => knownHosts.has(host));
  const plainNow = new Set(now.filter(plain).map((u) => u.host.toLowerCase()));
  const hosts = new Set<string>();
  const insecure = new Set<string>();
  const warnings: Record<string, string> = {};
  for (const field of FIELDS) {
    const next = patch[field];
    const changed = next !== undefined && next !== '' && next !== current[field];
    const u = parse(changed ? next : current[field]);
    if (!u) continue; // validateSettingsPatch reports it
    const host = u.host.toLowerCase();
    // The key after the save, to every host it reaches after it: a host kept, with another key, is new too.
    if (!allowed(host)) hosts.add(host);
    if (!changed) continue;
    if (plain(u)) {
      if (!plainNow.has(host)) insecure.add(host);
      warnings[field] =
        `${u.protocol}// to ${host} is not encrypted: anyone on the network path can read the provider key and the traffic. Use ${u.protocol === 'ws:' ? 'wss://' : 'https://'} when the server offers it.`;
    }
  }
  const needsOwner = keyAfter !== '' && !keyTyped && (hosts.size > 0 || insecure.size > 0);
  return { hosts: [...hosts], insecure: [...insecure], warnings, needsOwner };
}

/** The owner's sentence for an approval of a key destination. */
export function keyDestinationSummary(c: Pick<KeyDestinationCheck, 'hosts' | 'insecure'>): string {
  const all = [...new Set([...c.hosts, ...c.insecure])];
  const insecure = c.insecure.length ? ` The connection to ${c.insecure.join(', ')} is not encrypted (plain ws:// or http://).` : '';
  return `Send your provider key to ${all.join(' and ')}${c.hosts.length ? ', which has not received it before' : ''}.${insecure} Whoever runs that server can use your key.`;
}
