// The network's records beside this machine's: per model what the platform holds (offered, available,
// recent failures, dispatch failures, throughput, last request) next to what this ledger saw, and the
// platform's settled earnings (pay-as-you-go and subscription) next to the local estimate, with the
// difference explained. Data: the `network.records` bridge call; an unreadable answer says why, never zeros.
import type { NetworkRecordsView } from '../../shared/views/usage';
import { getBridge } from '../bridge';
import { Card, Stat } from './Card';
import { DataTable, ModelCell } from './DataTable';
import { ErrorText } from './Field';
import { fmtAgo, fmtInt, fmtMoney, fmtNumber } from '../lib/format';
import { useFetch } from '../lib/use-call';

export type RecordsSpan = NetworkRecordsView['span'];

export function NetworkRecordsCard({ span, refreshKey }: { span: RecordsSpan; refreshKey: number }) {
  const r = useFetch(() => getBridge().invoke('network.records', { span }), [span, refreshKey]);
  const v = r.data;
  return (
    <Card title="The network's records" testId="network-records">
      <ErrorText error={r.error} />
      {v && (
        <>
          {v.models.ok ? (
            <>
              {v.models.notListed.length > 0 && (
                <p className="warn" data-testid="network-not-listed">
                  Announced here but not held as offered by the network (it sends them no requests): {v.models.notListed.join(', ')}.
                </p>
              )}
              {v.models.rows.length === 0 ? (
                <p className="empty">The network holds no model of this provider yet.</p>
              ) : (
                <DataTable
                  testId="network-models"
                  dense
                  columns={[
                    { label: 'Model' },
                    { label: 'Offered' },
                    ...['Available', 'Recent ok', 'Recent failed', 'Dispatch failures', 'Tok/s (network)', 'Requests here', 'Errors here'].map((label) => ({
                      label,
                      num: true,
                    })),
                    { label: 'Last request' },
                  ]}
                >
                  {v.models.rows.map((m) => (
                    <tr key={m.modelId} data-model={m.modelId} data-offered={m.offered ? 'yes' : 'no'}>
                      <ModelCell model={m.modelId} />
                      <td data-testid="network-offered">{m.offered ? (m.servedHere ? 'Yes' : 'Yes (not announced here now)') : 'No (history)'}</td>
                      <td className="num">
                        {fmtInt(m.available)} of {fmtInt(m.capacity)}
                      </td>
                      <td className="num">{fmtInt(m.recentSuccesses)}</td>
                      <td className="num" data-testid="network-recent-failures">
                        {fmtInt(m.recentFailures)}
                      </td>
                      <td className="num" data-testid="network-dispatch-failures">
                        {fmtInt(m.dispatchFailures)}
                      </td>
                      <td className="num">{fmtNumber(m.throughput, 1)}</td>
                      <td className="num">{fmtInt(m.local.requests)}</td>
                      <td className="num">{fmtInt(m.local.errors)}</td>
                      <td>{m.lastRequestAt ? fmtAgo(m.lastRequestAt) : 'never'}</td>
                    </tr>
                  ))}
                </DataTable>
              )}
            </>
          ) : (
            <p className="empty" data-testid="network-models-error">
              The network's per-model records could not be read: {v.models.error}. What this machine saw is on this page; the network's view shows again once it
              answers.
            </p>
          )}
          {v.earnings.ok ? (
            <>
              <div className="stats">
                <Stat label="Settled by the network" value={fmtMoney(v.earnings.totalUsd)} testId="settled-total" />
                <Stat label="Pay-as-you-go" value={fmtMoney(v.earnings.payAsYouGoUsd)} testId="settled-payg" />
                <Stat label="Subscription" value={fmtMoney(v.earnings.subscriptionUsd)} testId="settled-subscription" />
                <Stat label="Local estimate" value={fmtMoney(v.earnings.localEstimateUsd)} testId="settled-local" />
                <Stat label="Difference" value={fmtMoney(v.earnings.differenceUsd)} testId="settled-difference" />
              </div>
              <p className="muted" data-testid="settled-explanation">
                {v.earnings.explanation}
              </p>
            </>
          ) : (
            <p className="empty" data-testid="settled-error">
              The network's settled earnings could not be read: {v.earnings.error}. The local estimate for this period is{' '}
              {fmtMoney(v.earnings.localEstimateUsd)} (tokens × published rate, pay-as-you-go only).
            </p>
          )}
        </>
      )}
    </Card>
  );
}
