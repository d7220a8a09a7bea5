// The one formatter of zod validation issues into a line for an error message:
// "path.to.field: message; other: message". Type-only on zod, so it is safe in any bundle.
import type { z } from 'zod';

export interface IssueFormat {
  /** Shown as the location when an issue has no path (e.g. '(payload)'); none: just the message. */
  root?: string;
  /** Put before every path (e.g. 'params'). */
  prefix?: string;
  /** At most this many issues are listed. */
  limit?: number;
  /** The text of one issue (default: zod's message). */
  message?: (issue: z.core.$ZodIssue) => string;
}

export function formatIssues(err: { issues: readonly z.core.$ZodIssue[] }, f: IssueFormat = {}): string {
  const list = f.limit === undefined ? err.issues : err.issues.slice(0, f.limit);
  return list
    .map((i) => {
      const where = [f.prefix, ...i.path.map(String)].filter(Boolean).join('.') || f.root;
      const msg = f.message ? f.message(i) : i.message;
      return where ? `${where}: ${msg}` : msg;
    })
    .join('; ');
}

/** The dotted path of the first issue (`patch`, `0.from`): the field a coded error names; none for the whole value. */
export function issueField(err: { issues: readonly z.core.$ZodIssue[] }): string | undefined {
  const where = err.issues[0]?.path.map(String).join('.');
  return where || undefined;
}
