// The platform's next steps (GET /api/v1/provider/status `next_steps[]`) are written for the Go provider's
// CLI and arrive numbered ("1. Run 'computing-provider inference request-approval' …"), which the console
// numbers again ("1. 1. Run …"). Here each step loses its own numbering and the Go provider's commands
// become what this app offers: a place in the console and the `swan-provider` command that does the same.
// A command this app has no counterpart of is left as the platform wrote it.

interface Translation {
  /** Matches the Go command's words after `computing-provider` (subcommand and flags). */
  match: RegExp;
  /** What to do here instead, in the console and from a terminal. */
  here: string;
}

const TRANSLATIONS: Translation[] = [
  { match: /^inference\s+request-approval\b/, here: '"Ask for approval" under Settings → Payout & activation (or `swan-provider account request-approval`)' },
  { match: /^inference\s+deposit\b/, here: 'the collateral step under Settings → Payout & activation (or `swan-provider account collateral`)' },
  {
    match: /^inference\s+set-beneficiary\b/,
    here: '"Payout address" under Settings → Payout & activation (or `swan-provider account set-beneficiary ADDRESS`)',
  },
  { match: /^inference\s+set-owner\b/, here: '"Owner address" under Settings → Payout & activation (or `swan-provider account set-owner ADDRESS`)' },
  { match: /^inference\s+status\b/, here: 'the Provider status card on the Dashboard (or `swan-provider account`)' },
  { match: /^inference\s+keygen\b/, here: 'the provider key field in Settings' },
  { match: /^(?:run|daemon)\b/, here: 'this app, which serves while it runs (headless: `swan-provider run`)' },
];

/** A command quoted with ', ", ` or “…”, or bare to the end of the clause. */
const GO_COMMAND = /(?:['"`“‘])?\bcomputing-provider\s+([^'"`”’,;)]*)(?:['"`”’])?/g;
const LEADING_NUMBERS = /^\s*(?:(?:\d{1,2}|[a-z])[.)]\s+|[-*•]\s+)+/i;

/** One step as the owner reads it here. */
export function cleanNextStep(step: string): string {
  const unnumbered = step.replace(LEADING_NUMBERS, '');
  const translated = unnumbered.replace(GO_COMMAND, (whole, rest: string) => {
    const t = TRANSLATIONS.find((x) => x.match.test(rest.trim()));
    return t ? t.here : whole;
  });
  // "Run <a place in the console>" reads wrong once the command became a button: use it instead.
  return translated
    .replace(/\b(?:run|execute|use)\s+(?=(?:"|the |this app))/gi, 'Use ')
    .replace(/\s{2,}/g, ' ')
    .trim();
}

/** Every step cleaned; empty ones and repeats dropped. */
export function cleanNextSteps(steps: readonly string[]): string[] {
  const out: string[] = [];
  for (const s of steps) {
    const c = cleanNextStep(s);
    if (c && !out.includes(c)) out.push(c);
  }
  return out;
}
