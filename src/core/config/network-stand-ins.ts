// Stand-ins of the named networks, for end-to-end tests of the owner's first run: with
// SWAN_NETWORK_STAND_INS set when the agent starts, a settings value that names mainnet's (or testnet's)
// addresses is dialled and asked at a hub and platform API on this machine instead. Settings, the console
// and the key-destination rule keep seeing the real addresses, so a test walks exactly the owner's path.
// It is read once from the agent's environment: nothing a console or a settings file says can set it, and
// only loopback addresses are accepted, so it can never send anything off this machine.
import { z } from 'zod';
import { NETWORKS, networkOf, type NetworkAddresses } from '../../shared/networks';
import { isLoopbackHost } from '../http/loopback';

export const NETWORK_STAND_INS_ENV = 'SWAN_NETWORK_STAND_INS';

type Named = keyof typeof NETWORKS;

export interface NetworkStandIns {
  /** Which named networks are stood in for, and by what (for the start-up warning). */
  readonly active: ReadonlyArray<{ network: Named } & NetworkAddresses>;
  /** The WebSocketURL to dial for a configured one. */
  hubUrl(configured: string): string;
  /** The ServiceURL to ask for a configured one. */
  serviceUrl(configured: string): string;
}

const loopback = (protocols: string[]) =>
  z.string().refine(
    (s) => {
      try {
        const u = new URL(s);
        return protocols.includes(u.protocol) && isLoopbackHost(u.hostname);
      } catch {
        return false;
      }
    },
    `a ${protocols.join(' or ')} address on this machine (127.0.0.1, ::1 or localhost)`,
  );

const standIn = z.object({ hubUrl: loopback(['ws:', 'wss:']), serviceUrl: loopback(['http:', 'https:']) }).strict();
const schema = z.object({ mainnet: standIn.optional(), testnet: standIn.optional() }).strict();

function same(a: string, b: string): boolean {
  return a.trim().replace(/\/+$/, '').toLowerCase() === b.trim().replace(/\/+$/, '').toLowerCase();
}

const NONE: NetworkStandIns = { active: [], hubUrl: (u) => u, serviceUrl: (u) => u };

/** Reads the stand-ins from the environment (none when the variable is unset); a bad value throws with why. */
export function networkStandIns(env: NodeJS.ProcessEnv): NetworkStandIns {
  const raw = env[NETWORK_STAND_INS_ENV];
  if (raw === undefined || raw.trim() === '') return NONE;
  let parsed: z.infer<typeof schema>;
  try {
    parsed = schema.parse(JSON.parse(raw));
  } catch (e) {
    const why = e instanceof z.ZodError ? e.issues.map((i) => `${i.path.join('.') || '(top)'}: ${i.message}`).join('; ') : (e as Error).message;
    throw new Error(
      `${NETWORK_STAND_INS_ENV} is not valid (${why}). It is for tests only: {"mainnet": {"hubUrl": "ws://127.0.0.1:…", "serviceUrl": "http://127.0.0.1:…"}}; unset it to use the real networks.`,
    );
  }
  const active = (Object.keys(parsed) as Named[]).flatMap((network) => (parsed[network] ? [{ network, ...parsed[network] }] : []));
  if (active.length === 0) return NONE;
  const byName = new Map(active.map((a) => [a.network, a]));
  return {
    active,
    hubUrl: (configured) => {
      const n = networkOf(configured);
      const s = n === 'custom' ? undefined : byName.get(n);
      // networkOf also accepts the address with /ws; keep that form (hubDialUrl warns about it as usual).
      if (!s) return configured;
      return same(configured, NETWORKS[n as Named].hubUrl) ? s.hubUrl : `${s.hubUrl.replace(/\/+$/, '')}/ws`;
    },
    serviceUrl: (configured) => {
      for (const s of active) if (same(configured, NETWORKS[s.network].serviceUrl)) return s.serviceUrl;
      return configured;
    },
  };
}
