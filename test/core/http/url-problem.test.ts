// The one check behind the webhook and update-feed address fields: a code for each kind of wrong address.
import { describe, expect, it } from 'vitest';
import { httpUrlIssue, httpUrlProblem } from '../../../src/core/http/url-problem';

describe('httpUrlIssue', () => {
  it('accepts http(s) without credentials, and empty', () => {
    for (const ok of ['', 'https://ntfy.sh/my-rig', 'http://127.0.0.1:8080/hook']) expect(httpUrlIssue(ok), ok).toBeUndefined();
  });

  it.each([
    ['not a url', 'not_a_url'],
    ['ftp://example.com/x', 'not_http'],
    ['file:///etc/passwd', 'not_http'],
    ['https://user:pw@example.com/x', 'has_credentials'],
    ['https://:pw@example.com/x', 'has_credentials'],
    // The alert webhook is posted to by the agent: never a cloud's metadata service, however it is spelt.
    ['http://169.254.169.254/latest/meta-data/', 'refused_address'],
    ['http://0xA9FEA9FE/', 'refused_address'],
    ['http://[fe80::1]/hook', 'refused_address'],
    ['http://100.100.100.200/', 'refused_address'],
  ])('%s → %s', (raw, code) => {
    expect(httpUrlIssue(raw)).toBe(code);
  });

  it('a length limit applies only when given', () => {
    const long = `https://example.com/${'a'.repeat(3000)}`;
    expect(httpUrlIssue(long)).toBeUndefined();
    expect(httpUrlIssue(long, 2048)).toBe('too_long');
  });
});

describe('httpUrlProblem', () => {
  it('names the field and says what to do', () => {
    const w = { subject: 'The webhook URL', inside: 'the webhook URL', credentialsHint: 'use a token in its path or query instead', maxLength: 10 };
    expect(httpUrlProblem('ftp://x', w)).toBe('The webhook URL must start with https:// or http://.');
    expect(httpUrlProblem('https://a:b@x', w)).toBe('Put no user name or password in the webhook URL; use a token in its path or query instead.');
    expect(httpUrlProblem('https://x.example/long', w)).toBe('The webhook URL is too long (10 characters at most).');
    expect(httpUrlProblem('https://x', w)).toBeUndefined();
    expect(httpUrlProblem('http://169.254.169.254', { ...w, maxLength: 100 })).toMatch(/^The webhook URL points at a link-local/);
  });
});
