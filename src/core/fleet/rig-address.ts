// The address of another rig's console, as the owner adds it. A rig is reached only at an address the
// owner typed: nothing is discovered or scanned, redirects are not followed (rig-client.ts), and the
// token goes only to that exact origin, in a header. Refused outright: anything but http(s), user names
// or passwords in the address, link-local and cloud metadata addresses (a token sent there could end up
// with the cloud provider's metadata service). Plain http to another machine is allowed (a LAN rig) and
// flagged `insecure`: the Fleet page says so and docs/fleet.md shows TLS and SSH tunnels.
import net from 'node:net';
import { classifyIp } from '../http/address-class';
import { FleetError } from './tokens';

export interface RigAddress {
  /** scheme://host:port plus the base path (no trailing slash): what the fleet API paths are joined to. */
  base: string;
  /** The same as a URL object. */
  url: URL;
  /** http to a host other than this machine: the token and figures cross the network unencrypted. */
  insecure: boolean;
}

const MAX_ADDRESS = 2048;
const METADATA_HOSTS = new Set(['metadata.google.internal', 'metadata', 'instance-data', 'instance-data.ec2.internal']);

export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h.endsWith('.localhost') || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
}

/** Link-local, cloud metadata, unspecified and multicast addresses (address-class.ts), and the metadata services' names. A name is checked again when
 *  it is resolved, at every read (rig-client.ts). */
function forbiddenHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (METADATA_HOSTS.has(h)) return true;
  return net.isIP(h.replace(/%.*$/, '')) !== 0 && classifyIp(h) === 'refused';
}

/** Reads an address the owner typed ("gpu-box.lan:7777" means http://gpu-box.lan:7777). */
export function parseRigAddress(raw: string): RigAddress {
  const text = raw.trim();
  if (!text || text.length > MAX_ADDRESS)
    throw new FleetError(
      'fleet_address_invalid',
      "Type the rig console's address, for example http://192.168.1.20:7777 or https://gpu-box.example.net.",
      'url',
    );
  let url: URL;
  try {
    url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`);
  } catch {
    throw new FleetError(
      'fleet_address_invalid',
      `"${text.slice(0, 100)}" is not an address. Use the rig console's address, for example http://192.168.1.20:7777.`,
      'url',
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new FleetError('fleet_address_invalid', "A rig console's address starts with http:// or https://.", 'url');
  if (url.username || url.password)
    throw new FleetError('fleet_address_invalid', "Put no user name or password in the address; paste the rig's token in the token field.", 'url');
  if (url.search || url.hash) {
    throw new FleetError(
      'fleet_address_invalid',
      'Type the address without "?…" or "#…" (a bookmark\'s ?token=… goes in the token field, not in the address).',
      'url',
    );
  }
  if (forbiddenHost(url.hostname))
    throw new FleetError('fleet_address_forbidden', `${url.hostname} is a link-local or cloud metadata address; a rig is never read there.`, 'url');
  const path = url.pathname.replace(/\/+$/, '');
  return { base: `${url.protocol}//${url.host}${path}`, url, insecure: url.protocol === 'http:' && !isLoopbackHost(url.hostname) };
}
