// The Usage page's fleet card: each rig's own ledger (fetched by this rig's agent over the rig's fleet
// API, never copied into this rig's ledger), their sums, and the platform's record of each rig beside it
// (what each rig fetched with its own key). Shown once another rig is added on the Fleet page.
import type { FleetUsageRig } from '../../shared/fleet';
import { getBridge } from '../bridge';
import { fmtDateTime, fmtInt, fmtMoney } from '../lib/format';
import { go } from '../lib/route';
import { useFetch } from '../lib/use-call';
import { Card } from './Card';
import { DataTable } from './DataTable';
import { ErrorText } from './Field';

function platformCell(r: FleetUsageRig): string {
  const p = r.usage?.platform;
  if (!p) return '—';
  if (!p.value) return p.error ? 'unavailable' : 'not fetched yet';
  return `${fmtInt(p.value.totalInferences)} req · ${fmtMoney(p.value.totalEarningsUsd)}`;
}

export function FleetUsageCard({ refreshKey }: { refreshKey: number }) {
  // Whether any other rig is added (once); only then is every rig's ledger fetched, and again on each refresh.
  const fleet = useFetch(() => getBridge().invoke('fleet.list', {}), []);
  const others = (fleet.data?.rigs.length ?? 1) > 1;
  const usage = useFetch(() => (others ? getBridge().invoke('fleet.usage', {}) : Promise.resolve(undefined)), [refreshKey, others]);
  const v = usage.data;
  if (!v || v.rigs.length < 2) return usage.error ? <ErrorText error={usage.error} /> : null;
  const answered = v.rigs.filter((r) => r.usage).length;
  return (
    <Card
      title="All rigs"
      testId="fleet-usage"
      actions={
        <button type="button" className="small-button" onClick={() => go('fleet')}>
          Fleet page
        </button>
      }
    >
      <p className="muted small">
        Each rig&apos;s own ledger, read {fmtDateTime(v.generatedAt)}, and the platform&apos;s all-time record of each rig (hub requests) beside it.
      </p>
      <DataTable
        dense
        testId="fleet-usage-table"
        columns={[
          { label: 'Rig' },
          { label: 'Requests today', num: true },
          { label: 'Tokens in / out today', num: true },
          { label: 'Earned today', num: true },
          { label: 'Requests, 30 days', num: true },
          { label: 'Earned, 30 days', num: true },
          { label: 'This month', num: true },
          { label: "Platform's record" },
        ]}
      >
        {v.rigs.map((r) => (
          <tr key={r.id} data-testid="fleet-usage-rig" data-status={r.status} data-self={r.self}>
            <th scope="row">
              {r.label}
              {r.self && <span className="muted small"> (this rig)</span>}
              {!r.usage && <span className="small block warn-text">{r.error ?? r.status}</span>}
            </th>
            <td className="num" data-testid="fleet-usage-requests-today">
              {r.usage ? fmtInt(r.usage.today.requests) : '—'}
            </td>
            <td className="num" data-testid="fleet-usage-tokens-today">
              {r.usage ? `${fmtInt(r.usage.today.tokensIn)} / ${fmtInt(r.usage.today.tokensOut)}` : '—'}
            </td>
            <td className="num">{r.usage ? fmtMoney(r.usage.today.earnings) : '—'}</td>
            <td className="num">{r.usage ? fmtInt(r.usage.last30.requests) : '—'}</td>
            <td className="num">{r.usage ? fmtMoney(r.usage.last30.earnings) : '—'}</td>
            <td className="num">{r.usage ? fmtMoney(r.usage.month.earnings) : '—'}</td>
            <td className="small">{platformCell(r)}</td>
          </tr>
        ))}
        <tr data-testid="fleet-usage-total">
          <th scope="row">
            Total{' '}
            <span className="muted small">
              ({answered} of {v.rigs.length} rigs)
            </span>
          </th>
          <td className="num" data-testid="fleet-usage-total-requests-today">
            {fmtInt(v.totals.today.requests)}
          </td>
          <td className="num" data-testid="fleet-usage-total-tokens-today">{`${fmtInt(v.totals.today.tokensIn)} / ${fmtInt(v.totals.today.tokensOut)}`}</td>
          <td className="num">{fmtMoney(v.totals.today.earnings)}</td>
          <td className="num">{fmtInt(v.totals.last30.requests)}</td>
          <td className="num">{fmtMoney(v.totals.last30.earnings)}</td>
          <td className="num">{fmtMoney(v.totals.month.earnings)}</td>
          <td
            className="small"
            title={
              v.platform && v.platform.providers < v.platform.rigs
                ? 'Rigs that serve with the same provider key share one platform record: it is counted once.'
                : undefined
            }
          >
            {v.platform
              ? `${fmtInt(v.platform.totalInferences)} req · ${fmtMoney(v.platform.totalEarningsUsd)} (${v.platform.providers === v.platform.rigs ? `${v.platform.rigs} rigs` : `${v.platform.providers} keys, ${v.platform.rigs} rigs`})`
              : '—'}
          </td>
        </tr>
      </DataTable>
    </Card>
  );
}
