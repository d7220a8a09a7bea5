// One call to another rig's fleet API: the token in the Authorization header (never in the address),
// a deadline, a size limit, no redirects (a rig that answers 3xx is not followed, so the token never
// goes to an address the owner did not add), and the answer validated before it is used.
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { classifyIp } from '../http/address-class';
import { parseJson, type JsonLimits } from '../http/bounded-json';
import type { z } from 'zod';
import { formatIssues } from '../../shared/zod-issues';
import type { RigAddress } from './rig-address';
import { FleetError } from './tokens';

/** Largest answer read from a rig. */
export const MAX_ANSWER_BYTES = 1024 * 1024;
/** A rig's answer: a summary or usage is a few kB, a few hundred keys, five levels deep. */
const ANSWER_LIMITS: JsonLimits = { maxBytes: MAX_ANSWER_BYTES, maxDepth: 16, maxKeys: 50_000 };
/** How long a rig has to answer. */
export const RIG_TIMEOUT_MS = 3000;

export interface RigCall<T> {
  address: RigAddress;
  token: string;
  path: string;
  method?: 'GET' | 'POST';
  schema: z.ZodType<T>;
  timeoutMs?: number;
}

function describe(err: NodeJS.ErrnoException, base: string): string {
  switch (err.code) {
    case 'ECONNREFUSED':
      return `Nothing answers at ${base}: the rig's agent is stopped, or its console listens on another address.`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `The name in ${base} does not resolve.`;
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `${base} cannot be reached from this machine (no route).`;
    case 'ECONNRESET':
      return `${base} closed the connection.`;
    case 'EFORBIDDEN':
      return err.message;
    default:
      return `${base} could not be reached: ${err.message}`;
  }
}

/** Resolves names as usual, but never to a link-local or metadata address (a name the owner added may change what it points at). */
const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, '', 0);
    const list = addresses as dns.LookupAddress[];
    const bad = list.find((a) => classifyIp(a.address) === 'refused');
    if (bad || list.length === 0) {
      const e: NodeJS.ErrnoException = new Error(
        `${hostname} resolves to ${bad?.address ?? 'nothing'}, a link-local or cloud metadata address; a rig is never read there`,
      );
      e.code = 'EFORBIDDEN';
      return callback(e, '', 0);
    }
    if (options.all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, list);
    callback(null, list[0]!.address, list[0]!.family);
  });
};

/** Calls the rig; resolves with the validated answer, rejects with a FleetError (rig_unreachable, rig_refused_token, rig_bad_answer). */
export function callRig<T>(c: RigCall<T>): Promise<T> {
  const target = new URL(`${c.address.base}${c.path}`);
  const mod = target.protocol === 'https:' ? https : http;
  const timeoutMs = c.timeoutMs ?? RIG_TIMEOUT_MS;
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const fail = (e: FleetError) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      reject(e);
    };
    const req = mod.request(
      target,
      {
        method: c.method ?? 'GET',
        headers: { Authorization: `Bearer ${c.token}`, Accept: 'application/json', 'User-Agent': 'swan-provider-fleet' },
        // A fresh connection per call: a rig that went away is seen at once, not through a stale pooled socket.
        agent: false,
        lookup: guardedLookup,
      },
      (res) => {
        const status = res.statusCode ?? 0;
        if (status === 401 || status === 403) {
          res.resume();
          return fail(
            new FleetError(
              'rig_refused_token',
              `${c.address.base} refused the token (HTTP ${status}): it is wrong or was revoked. Make a new one on that rig (swan-provider fleet token create) and add the rig again.`,
              'token',
            ),
          );
        }
        if (status === 421) {
          res.resume();
          return fail(
            new FleetError(
              'rig_bad_answer',
              `${c.address.base} answered 421: that console answers only to its own address. Through an SSH tunnel use the same port on both ends; behind a proxy pass the rig's own Host (docs/fleet.md).`,
            ),
          );
        }
        if (status < 200 || status >= 300) {
          res.resume();
          const moved = status >= 300 && status < 400 ? ' (a redirect: rigs are read only at the address you added, so it is not followed)' : '';
          return fail(
            new FleetError('rig_bad_answer', `${c.address.base} answered HTTP ${status}${moved}; is it a Swan Provider console of a recent version?`),
          );
        }
        const parts: Buffer[] = [];
        let size = 0;
        res.on('data', (d: Buffer) => {
          size += d.length;
          if (size > MAX_ANSWER_BYTES)
            fail(new FleetError('rig_bad_answer', `${c.address.base} sent an answer over ${MAX_ANSWER_BYTES / 1024 / 1024} MB; it was not read.`));
          else parts.push(d);
        });
        res.on('error', (e: NodeJS.ErrnoException) => fail(new FleetError('rig_unreachable', describe(e, c.address.base))));
        res.on('end', () => {
          if (settled) return;
          let data: unknown;
          try {
            data = parseJson(Buffer.concat(parts), ANSWER_LIMITS);
          } catch (e) {
            return fail(
              new FleetError('rig_bad_answer', `${c.address.base} did not answer JSON a rig sends (${(e as Error).message}); is it a Swan Provider console?`),
            );
          }
          const parsed = c.schema.safeParse(data);
          if (!parsed.success)
            return fail(
              new FleetError(
                'rig_bad_answer',
                `${c.address.base} answered something this console cannot read (${formatIssues(parsed.error).slice(0, 300)}); update both rigs to the same version.`,
              ),
            );
          settled = true;
          clearTimeout(timer);
          resolve(parsed.data);
        });
      },
    );
    const timer = setTimeout(() => fail(new FleetError('rig_unreachable', `${c.address.base} did not answer within ${timeoutMs / 1000} s.`)), timeoutMs);
    req.on('error', (e: NodeJS.ErrnoException) =>
      fail(new FleetError(e.code === 'EFORBIDDEN' ? 'fleet_address_forbidden' : 'rig_unreachable', describe(e, c.address.base), 'url')),
    );
    req.end();
  });
}
