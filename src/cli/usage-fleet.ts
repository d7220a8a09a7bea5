// `swan-provider usage --fleet`: every rig's ledger, summed. This rig's from its own ledger file; the
// others fetched over their fleet APIs with the tokens the console keeps (Fleet page → Add a rig), each
// rig's own figures, never copied into another rig's ledger. Beside them, the platform's record of each
// rig (what each rig last fetched with its own provider key).
import fs from 'node:fs';
import { EarningsService } from '../core/accounting/earnings';
import { SettingsFile } from '../core/config/settings-file';
import { loadConfig } from '../core/config/config';
import { providerKeyOf } from '../core/config/provider-key';
import { homePath } from '../core/config/home-layout';
import { FileSecretStore } from '../core/config/secrets';
import { readFleetUsage } from '../core/fleet/fleet-reader';
import { FleetStore } from '../core/fleet/fleet-store';
import { rigUsage } from '../core/fleet/rig-figures';
import { Ledger } from '../core/ledger/ledger';
import { memoryLog } from '../core/base/log';
import { forTerminal, terminalWriter } from '../core/base/terminal';
import type { FleetUsageRig, FleetUsageView } from '../shared/fleet';
import type { UsageTotals } from '../shared/types';
import { fmtDateTime } from '../shared/dates';

const COUNT = new Intl.NumberFormat('en-US');
const num = (n: number): string => COUNT.format(n);
const money = (n: number): string => (n === 0 ? '0' : n >= 1 ? n.toFixed(2) : n.toFixed(6).replace(/0+$/, ''));

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows
    .map((r) =>
      r
        .map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** This rig's name and provider key as its agent reads them (settings.json over config.toml; the key from the environment, secrets.json or ApiKey). */
function selfOf(home: string, secrets: FileSecretStore): { nodeName: string; providerKey: string } {
  const fromSettings = SettingsFile.in(home).get().nodeName;
  try {
    const config = loadConfig(homePath(home, 'config'));
    return { nodeName: fromSettings || config.nodeName || 'this rig', providerKey: providerKeyOf({ env: process.env, secrets, config }) };
  } catch {
    return { nodeName: fromSettings || 'this rig', providerKey: process.env.INFERENCE_API_KEY ?? '' };
  }
}

const PERIODS = [
  ['today', 'Today'],
  ['last7', 'Last 7 days'],
  ['last30', 'Last 30 days'],
  ['month', 'This month'],
] as const;

function rigName(r: FleetUsageRig): string {
  return r.self ? `${r.label} (this rig)` : r.label;
}

function periodTable(v: FleetUsageView, key: (typeof PERIODS)[number][0]): string {
  const row = (name: string, t: UsageTotals): string[] => [name, num(t.requests), num(t.errors), num(t.tokensIn), num(t.tokensOut), money(t.earnings)];
  const rows = [['rig', 'requests', 'errors', 'tokens in', 'tokens out', 'earnings (USD)']];
  for (const r of v.rigs) rows.push(r.usage ? row(rigName(r), r.usage[key]) : [rigName(r), r.status, '', '', '', '']);
  const answered = v.rigs.filter((r) => r.usage).length;
  rows.push(row(`total (${answered} of ${v.rigs.length} rigs)`, v.totals[key]));
  return table(rows);
}

function platformTable(v: FleetUsageView): string[] {
  const rows = [['rig', 'platform requests', 'ledger requests', 'platform tokens', 'ledger tokens', 'platform USD', 'ledger USD', 'platform record']];
  for (const r of v.rigs) {
    const u = r.usage;
    if (!u) continue;
    const p = u.platform.value;
    const asOf =
      u.platform.asOf === null
        ? u.platform.error
          ? `unavailable (${u.platform.error})`
          : 'not fetched yet'
        : `as of ${fmtDateTime(u.platform.asOf)}${u.platform.stale ? ' (stale)' : ''}`;
    rows.push([
      rigName(r),
      p ? num(p.totalInferences) : '-',
      num(u.local.requests),
      p ? num(p.totalTokens) : '-',
      num(u.local.tokensIn + u.local.tokensOut),
      p ? money(p.totalEarningsUsd) : '-',
      money(u.local.earnings),
      asOf,
    ]);
  }
  const lines = ['', "The platform's record of each rig (all time, hub requests; each rig fetches its own with its own key), beside its ledger:", table(rows)];
  if (v.platform) {
    const shared = v.platform.providers < v.platform.rigs ? ` (rigs that serve with the same provider key share one record, counted once)` : '';
    lines.push(
      `Platform total over ${v.platform.providers} provider key(s) of ${v.platform.rigs} rig(s)${shared}: ${num(v.platform.totalInferences)} requests, ${num(v.platform.totalTokens)} tokens, ${money(v.platform.totalEarningsUsd)} USD.`,
    );
  }
  return lines;
}

export function renderFleetUsage(v: FleetUsageView): string {
  const lines = [`Fleet usage: ${v.rigs.length} rig(s), read ${fmtDateTime(v.generatedAt)}`];
  for (const [key, title] of PERIODS) lines.push('', `${title}:`, periodTable(v, key));
  const missing = v.rigs.filter((r) => !r.usage);
  if (missing.length > 0) {
    lines.push('', 'Not in the totals:');
    for (const r of missing) lines.push(`  - ${r.label}: ${r.status}${r.error ? `: ${r.error}` : ''}`);
  }
  lines.push(...platformTable(v));
  return `${lines.join('\n')}\n`;
}

export interface FleetUsageOptions {
  home: string;
  json?: boolean;
  stdout?: NodeJS.WritableStream;
  stderr?: NodeJS.WritableStream;
}

/** Exit codes: 0 every rig answered, 1 one or more did not (the others are still shown and summed). */
export async function usageFleetCommand(o: FleetUsageOptions): Promise<number> {
  const out = o.stdout ?? process.stdout;
  const err = terminalWriter(o.stderr ?? process.stderr);
  const ledgerFile = homePath(o.home, 'ledger');
  const ledger = fs.existsSync(ledgerFile) ? Ledger.open(ledgerFile) : undefined;
  try {
    const earnings = new EarningsService({
      home: o.home,
      ...(ledger ? { ledger } : {}),
      log: memoryLog().child('earnings'),
      serviceUrl: () => '',
      providerKey: () => '',
      models: () => [],
    });
    // The store is only read here: the running agent is the one writer of fleet.json and the secrets.
    const secrets = new FileSecretStore(o.home);
    const store = new FleetStore(o.home, secrets);
    const keychain = fs.existsSync(homePath(o.home, 'keychainSecrets'));
    const self = selfOf(o.home, secrets);
    const view = await readFleetUsage(store, () => rigUsage({ nodeId: '', ...self, ...(ledger ? { ledger } : {}), platform: () => earnings.stats.view() }), {
      ...(keychain ? { missingToken: "its token is in the desktop app's keychain, which this command cannot read: see the Usage page in the app." } : {}),
    });
    if (store.list().length === 0) err.write('No other rigs are added yet: add them on the Fleet page (console or desktop app). This rig alone:\n');
    out.write(o.json ? `${JSON.stringify(view, null, 2)}\n` : forTerminal(renderFleetUsage(view)));
    return view.rigs.every((r) => r.usage) ? 0 : 1;
  } finally {
    ledger?.close();
  }
}
