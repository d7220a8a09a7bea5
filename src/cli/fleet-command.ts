// `swan-provider fleet token create|list|revoke`: the read-only tokens another rig's console uses to read
// this rig (its fleet API). Safe while the agent runs: it re-reads the token file when it changes, so a
// token made or revoked here works, or stops working, at once.
import { FleetError, FleetTokens } from '../core/fleet/tokens';
import { fmtDateTime } from '../shared/dates';
import { forTerminal, terminalWriter } from '../core/base/terminal';

export interface FleetTokenCommandOptions {
  home: string;
  action: 'create' | 'list' | 'revoke';
  name?: string;
  stdout?: NodeJS.WritableStream;
  stderr?: NodeJS.WritableStream;
}

/** Exit codes: 0 done, 1 nothing to revoke, 2 a bad name. */
export function fleetTokenCommand(o: FleetTokenCommandOptions): number {
  const out = o.stdout ?? process.stdout;
  const err = terminalWriter(o.stderr ?? process.stderr);
  const tokens = new FleetTokens(o.home);
  try {
    if (o.action === 'create') {
      const made = tokens.create(o.name ?? '');
      // The token goes to stdout alone on its line, so `$(swan-provider fleet token create …)` or a pipe takes just it.
      err.write(
        `Made the read-only fleet token "${made.name}". It is shown once; only its hash is kept.\n` +
          "On the console that will read this rig: Fleet → Add a rig, with this rig's console address and this token.\n" +
          "It reads this rig's figures and nothing more: it cannot open the console, change settings, keys or models.\n",
      );
      out.write(`${made.token}\n`);
      return 0;
    }
    if (o.action === 'revoke') {
      if (!tokens.revoke(o.name ?? '')) {
        err.write(`No fleet token is named "${o.name}". \`swan-provider fleet token list\` shows them.\n`);
        return 1;
      }
      out.write(`Revoked "${o.name}": it stops working now, also for the running agent.\n`);
      return 0;
    }
    const list = tokens.list();
    if (list.length === 0) {
      out.write('No fleet tokens. Make one with `swan-provider fleet token create --name <name>`.\n');
      return 0;
    }
    // When each was last used is known to the running agent only (the Fleet page shows it).
    const rows = [['name', 'scope', 'made'], ...list.map((t) => [t.name, t.scope, fmtDateTime(t.createdAt)])];
    const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
    out.write(
      forTerminal(
        `${rows
          .map((r) =>
            r
              .map((c, i) => c.padEnd(widths[i]!))
              .join('  ')
              .trimEnd(),
          )
          .join('\n')}\n`,
      ),
    );
    return 0;
  } catch (e) {
    err.write(`${(e as Error).message}\n`);
    return e instanceof FleetError ? 2 : 1;
  }
}
