// Where an address points, for the places the agent sends requests to an address someone typed (an engine
// endpoint added in the console): this machine, the owner's own network, somewhere else on the internet,
// or a range nothing of ours has any business reaching. Link-local addresses (169.254/16, fe80::/10) hold
// cloud metadata services (169.254.169.254 hands out a cloud machine's credentials), and a few clouds put
// theirs elsewhere (100.100.100.200, fd00:ec2::254); a request there is an SSRF, never an engine.
import dns from 'node:dns';
import net from 'node:net';

/**
 * - `loopback`: 127/8, ::1, localhost;
 * - `lan`: the owner's network: 10/8, 172.16/12, 192.168/16, 100.64/10 (carrier-grade NAT, Tailscale), fc00::/7;
 * - `public`: anything else that is routable;
 * - `refused`: link-local, cloud metadata, unspecified (0.0.0.0, ::), multicast and broadcast.
 */
export type AddressClass = 'loopback' | 'lan' | 'public' | 'refused';

/** Metadata services outside the link-local ranges (which are refused as a whole). */
const METADATA = new Set(['100.100.100.200', 'fd00:ec2::254', '168.63.129.16']);

function ipv4Parts(ip: string): number[] | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(ip);
  if (!m) return undefined;
  const parts = m.slice(1).map(Number);
  return parts.every((p) => p <= 255) ? parts : undefined;
}

function classifyV4(ip: string): AddressClass {
  const p = ipv4Parts(ip);
  if (!p) return 'refused';
  const [a, b] = p as [number, number, number, number];
  if (METADATA.has(ip)) return 'refused';
  if (a === 127) return 'loopback';
  if (a === 0 || a >= 224 || (a === 169 && b === 254)) return 'refused';
  if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 100 && b >= 64 && b <= 127)) return 'lan';
  return 'public';
}

/** The first 16 bits of an IPv6 address, from its text form (after `::` expansion is not needed for the prefixes we test). */
function classifyV6(ip: string): AddressClass {
  const a = ip
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/%.*$/, '');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(a);
  if (mapped) return classifyV4(mapped[1] as string);
  if (/^::ffff:[0-9a-f]{1,4}:[0-9a-f]{1,4}$/.test(a)) {
    // The hex form of an IPv4-mapped address (::ffff:a9fe:a9fe is 169.254.169.254).
    const [hi, lo] = a
      .slice(7)
      .split(':')
      .map((h) => parseInt(h, 16)) as [number, number];
    return classifyV4(`${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`);
  }
  if (a === '::1') return 'loopback';
  if (a === '::' || METADATA.has(a)) return 'refused';
  const first = a.startsWith('::') ? 0 : parseInt(a.split(':')[0] as string, 16);
  if (Number.isNaN(first)) return 'refused';
  if ((first & 0xffc0) === 0xfe80 || (first & 0xff00) === 0xff00) return 'refused';
  if ((first & 0xfe00) === 0xfc00) return 'lan';
  return 'public';
}

/** The class of an IP address (v4 or v6, brackets and zone ids allowed). A string that is not an IP is `refused`. */
export function classifyIp(ip: string): AddressClass {
  const bare = ip.replace(/^\[|\]$/g, '');
  const kind = net.isIP(bare.replace(/%.*$/, ''));
  if (kind === 4) return classifyV4(bare);
  if (kind === 6) return classifyV6(bare);
  return 'refused';
}

const RANK: Record<AddressClass, number> = { loopback: 0, lan: 1, public: 2, refused: 3 };

/** The widest of several classes (a name that resolves to a LAN and a public address is public). */
export function widest(classes: AddressClass[]): AddressClass {
  return classes.reduce<AddressClass>((w, c) => (RANK[c] > RANK[w] ? c : w), 'loopback');
}

export type Resolver = (host: string) => Promise<string[]>;

const systemResolver: Resolver = async (host) => (await dns.promises.lookup(host, { all: true, verbatim: true })).map((r) => r.address);

/**
 * The class of a URL host (a name is resolved: every address it resolves to counts, the widest wins).
 * A name that does not resolve is `public` (nothing proves it is the owner's), except `localhost` itself
 * (loopback by definition); an address is classed as written. WHATWG URL parsing has already turned
 * 0xA9FEA9FE and other IPv4 spellings into dotted form. Every name is resolved before it is classed, also
 * `localhost` and `*.localhost`: a hosts file or a resolver may point `metadata.localhost` at 169.254.169.254.
 */
export async function classifyHost(hostname: string, resolve: Resolver = systemResolver): Promise<AddressClass> {
  const h = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (net.isIP(h.replace(/%.*$/, ''))) return classifyIp(h);
  const unresolved: AddressClass = h === 'localhost' ? 'loopback' : 'public';
  let addrs: string[];
  try {
    addrs = await resolve(h);
  } catch {
    return unresolved;
  }
  return addrs.length === 0 ? unresolved : widest(addrs.map(classifyIp));
}

/** What an engine address the agent never probes says instead of an answer (the console refuses it the same way). */
export const REFUSED_ADDRESS_TEXT = 'an address the agent never sends requests to (link-local, cloud metadata or unspecified): not probed';

/** Whether a URL's host (the name resolved first) is one nothing of ours may reach: one policy for the console, the CLI and config. */
export async function isRefusedUrl(url: string, resolve?: Resolver): Promise<boolean> {
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    return false;
  }
  return (await classifyHost(host, resolve)) === 'refused';
}
