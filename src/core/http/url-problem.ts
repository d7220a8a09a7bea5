// One check for an http(s) address the owner types in Settings (the alert webhook, the update feed):
// a stable code for what is wrong, and the owner's sentence naming the field.
import net from 'node:net';
import { classifyIp } from './address-class';

/**
 * What is wrong with the address: not a URL, another scheme, a user name or password in it, too long, or an
 * address in a range nothing of ours may reach (link-local, cloud metadata, unspecified: address-class.ts).
 */
export type UrlIssue = 'not_a_url' | 'not_http' | 'has_credentials' | 'too_long' | 'refused_address';

/** The issue with `raw`, or undefined when it is fine ('' is fine: it means off or the default). */
export function httpUrlIssue(raw: string, maxLength = Infinity): UrlIssue | undefined {
  if (raw === '') return undefined;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return 'not_a_url';
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return 'not_http';
  if (u.username || u.password) return 'has_credentials';
  if (raw.length > maxLength) return 'too_long';
  // An address written as an IP is checked here; the agent's own requests never go to such a range.
  if (net.isIP(u.hostname.replace(/^\[|\]$/g, '')) && classifyIp(u.hostname) === 'refused') return 'refused_address';
  return undefined;
}

export interface UrlWords {
  /** The field as a sentence starts: "The webhook URL". */
  subject: string;
  /** The field inside a sentence: "the webhook URL". */
  inside: string;
  /** What to do instead of credentials, if anything: "use a token in its path or query instead". */
  credentialsHint?: string;
  maxLength?: number;
}

/** The owner's sentence for the issue with `raw`, or undefined when it is fine. */
export function httpUrlProblem(raw: string, w: UrlWords): string | undefined {
  switch (httpUrlIssue(raw, w.maxLength)) {
    case undefined:
      return undefined;
    case 'not_a_url':
      return `${w.subject} is not a valid address; it must start with https:// or http://.`;
    case 'not_http':
      return `${w.subject} must start with https:// or http://.`;
    case 'has_credentials':
      return `Put no user name or password in ${w.inside}${w.credentialsHint ? `; ${w.credentialsHint}` : ''}.`;
    case 'too_long':
      return `${w.subject} is too long (${w.maxLength} characters at most).`;
    case 'refused_address':
      return `${w.subject} points at a link-local, cloud-metadata or unspecified address; use the server's real address.`;
  }
}
