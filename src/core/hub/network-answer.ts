// What a client of the network is told when a hub request fails. The ledger, the log and the console keep
// the owner's words (the engine's address, "check that it is running"); the network gets none of them: a
// temporary outage (the engine does not answer, every engine is down, the model went away) is a 503 (504 for
// a call that passed its deadline) with a generic message the client can retry on, never a 404 (the openai
// SDK raises NotFoundError on 404 and does not retry); any other failure keeps its status, its text stripped
// of addresses and of advice to the owner.
import type { InferenceResult } from '../inference/runner';

/** What the network hears for an outage: the same words every time, nothing of this machine. */
export const NETWORK_OUTAGE = 'The provider cannot serve this model right now (temporarily unavailable); try again.';

/** Addresses of the owner's machines: URLs, IPv4 and bracketed IPv6 with a port, localhost. */
const ADDRESS = /\b[a-z][a-z0-9+.-]*:\/\/[^\s,;)'"]+|\[[0-9a-f:.]+\](?::\d+)?|\b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?\b|\blocalhost(?::\d+)?\b/gi;
/** A clause that tells the owner what to do (our texts put it after a semicolon or a dash). */
const ADVICE = /^(check|start|restart|set|put|see|copy|wait|switch|add|serve|pick|list|open|run)\b/i;

/** The text without addresses or advice to the owner, at most 300 characters. */
export function scrubForNetwork(text: string): string {
  const parts = text
    .replace(ADDRESS, 'the engine')
    .split(/;\s+|\s+—\s+/)
    .filter((p, i) => i === 0 || !ADVICE.test(p.trim()));
  return parts
    .join('; ')
    .replace(/the engine at the engine/g, 'the engine')
    .slice(0, 300);
}

/** Whether a failed or refused request is a temporary outage of this provider (and not the request's fault). */
export function isOutage(r: Pick<InferenceResult, 'status' | 'statusCode' | 'noAnswer'>): boolean {
  if (r.status === 'error') return r.noAnswer !== undefined || r.statusCode === 503;
  return r.status === 'rejected' && r.statusCode === 503;
}

/** The status and error text a failed hub request is answered with. */
export function networkAnswer(r: Pick<InferenceResult, 'status' | 'statusCode' | 'error' | 'noAnswer'>): { statusCode: number; error: string } {
  // An engine call that ran past its deadline stays 504 (a client retries it as it does a 503); the words are the same.
  if (isOutage(r)) return { statusCode: r.statusCode === 504 ? 504 : 503, error: NETWORK_OUTAGE };
  return { statusCode: r.statusCode, error: scrubForNetwork(r.error ?? r.status) };
}
