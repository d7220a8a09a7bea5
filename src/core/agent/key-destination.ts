// Where the provider key goes. The agent sends the key to the hub URL (register) and the service URL
// (key check, provider status), so changing either is changing who receives the key: settings.save
// takes such a change only with the key typed again or a confirmation naming each new host
// (`confirmKeyDestination`), and plain ws:// / http:// to a host that is not this machine only with
// `confirmInsecure: true`. Whoever holds the console (or a stolen session) cannot redirect the key
// silently; the UI shows the hosts and the insecure warning and asks (KeyDestinationConfirm.tsx).
import type { SettingsPatch } from '../../shared/bridge';
import { isLoopbackHost } from '../gateway/auth';

export interface KeyDestinationCheck {
  errors: Record<string, string>;
  /** What the owner has to confirm for the save to go through (present only when something is missing). */
  confirm?: { keyDestination: string[]; insecure: string[] };
}

function parse(url: string): URL | undefined {
  try {
    return new URL(url);
  } catch {
    return undefined;
  }
}

const FIELDS = ['hubUrl', 'serviceUrl'] as const;

export function checkKeyDestination(current: { hubUrl: string; serviceUrl: string }, patch: SettingsPatch): KeyDestinationCheck {
  const confirmed = new Set((typeof patch.confirmKeyDestination === 'string' ? [patch.confirmKeyDestination] : (patch.confirmKeyDestination ?? [])).map((h) => h.trim().toLowerCase()));
  const keyTyped = (patch.providerKey ?? '').trim() !== '';
  const errors: Record<string, string> = {};
  const hosts = new Set<string>();
  const insecure = new Set<string>();
  for (const field of FIELDS) {
    const next = patch[field];
    if (next === undefined || next === '' || next === current[field]) continue;
    const u = parse(next);
    if (!u) continue; // validateSettingsPatch reports it
    const host = u.host.toLowerCase();
    const problems: string[] = [];
    if (host !== parse(current[field])?.host.toLowerCase() && !keyTyped && !confirmed.has(host)) {
      hosts.add(host);
      problems.push(`Your provider key would be sent to ${host}, a server it was not sent to before. Type the key again, or confirm that ${host} may receive it.`);
    }
    if ((u.protocol === 'ws:' || u.protocol === 'http:') && !isLoopbackHost(u.hostname) && patch.confirmInsecure !== true) {
      insecure.add(host);
      problems.push(`${u.protocol}// to ${host} is not encrypted: anyone on the network path can read the key and the traffic. Use ${u.protocol === 'ws:' ? 'wss://' : 'https://'}, or confirm the insecure connection.`);
    }
    if (problems.length) errors[field] = problems.join(' ');
  }
  if (Object.keys(errors).length === 0) return { errors };
  return { errors, confirm: { keyDestination: [...hosts], insecure: [...insecure] } };
}
