// Earnings beside the platform: its own record next to the local ledger (with why they differ), what
// this machine keeps after power, the projection with its assumptions, and where each model's rate
// comes from. Data: the `earnings.overview` bridge call (cached by the agent: rates 5 min, stats 2 min).
import { useState } from 'react';
import type { EarningsOverview } from '../../shared/views/usage';
import { getBridge } from '../bridge';
import { Badge } from './Badge';
import { Card } from './Card';
import { ErrorText, Field } from './Field';
import { fmtDateTime, fmtInt, fmtMoney, fmtNumber, fmtPercent } from '../lib/format';
import { useCall } from '../lib/use-call';
import { DataTable, ModelCell } from './DataTable';
import { BusyButton } from './BusyButton';

function AsOf({ asOf, stale, error, testId }: { asOf: number | null; stale: boolean; error?: string | undefined; testId: string }) {
  if (asOf === null)
    return (
      <span className="muted" data-testid={testId}>
        {error ? `Unavailable: ${error}` : 'Not fetched yet'}
      </span>
    );
  return (
    <span className="muted" data-testid={testId} data-stale={stale}>
      as of {fmtDateTime(asOf)}{' '}
      {stale && (
        <Badge tone="warn" testId={`${testId}-stale`}>
          stale{error ? `: ${error}` : ''}
        </Badge>
      )}
    </span>
  );
}

function signed(n: number, fmt: (v: number) => string): string {
  return n === 0 ? fmt(0) : `${n > 0 ? '+' : '−'}${fmt(Math.abs(n))}`;
}

export function PlatformRecordCard({ o }: { o: EarningsOverview }) {
  const p = o.platform.value;
  const l = o.local;
  const d = o.difference;
  const rows: Array<[string, string, string, string, string]> = [
    ['Requests', p ? fmtInt(p.totalInferences) : '—', fmtInt(l.requests), d ? signed(d.requests, fmtInt) : '—', 'requests'],
    ['Failed', p ? fmtInt(p.failedInferences) : '—', fmtInt(l.failed), p ? signed(p.failedInferences - l.failed, fmtInt) : '—', 'failed'],
    ['Tokens', p ? fmtInt(p.totalTokens) : '—', fmtInt(l.tokensIn + l.tokensOut), d ? signed(d.tokens, fmtInt) : '—', 'tokens'],
    ['Earnings', p ? fmtMoney(p.totalEarningsUsd) : '—', fmtMoney(l.earnings), d ? signed(d.earningsUsd, fmtMoney) : '—', 'earnings'],
  ];
  return (
    <Card
      title="The platform's record and this machine's"
      testId="platform-record"
      actions={<AsOf asOf={o.platform.asOf} stale={o.platform.stale} error={o.platform.error} testId="platform-asof" />}
    >
      <DataTable
        testId="platform-vs-local"
        columns={[
          { label: 'All time, hub requests' },
          { label: 'Platform', num: true },
          { label: 'This ledger', num: true },
          { label: 'Difference', num: true },
        ]}
      >
        {rows.map(([label, plat, local, diff, id]) => (
          <tr key={id}>
            <th scope="row">{label}</th>
            <td className="num" data-testid={`platform-${id}`}>
              {plat}
            </td>
            <td className="num" data-testid={`local-${id}`}>
              {local}
            </td>
            <td className="num" data-testid={`diff-${id}`}>
              {diff}
            </td>
          </tr>
        ))}
      </DataTable>
      <p className="muted">
        Uptime over 7 days (the platform&apos;s figure): <strong data-testid="platform-uptime">{p ? fmtPercent(p.uptime7dPercent / 100) : '—'}</strong>
        {l.firstAt !== null && <> · this ledger starts {fmtDateTime(l.firstAt)}</>}
      </p>
      <h3 className="subhead">Why they differ</h3>
      <ul className="reasons" data-testid="difference-reasons">
        {o.reasons.map((r) => (
          <li key={r.code} data-code={r.code}>
            {r.text}
          </li>
        ))}
      </ul>
    </Card>
  );
}

function parseNum(text: string): number | null {
  const n = Number(text.trim());
  return text.trim() !== '' && Number.isFinite(n) && n >= 0 ? n : null;
}

function ElectricityForm({ o, onSaved }: { o: EarningsOverview; onSaved: (o: EarningsOverview) => void }) {
  const e = o.electricity;
  const [price, setPrice] = useState(e ? String(e.perKwh) : '');
  const [currency, setCurrency] = useState(e?.currency ?? 'USD');
  const [rate, setRate] = useState(e && e.currency !== 'USD' ? String(e.usdPerUnit) : '');
  const [err, setErr] = useState<string | undefined>(undefined);
  const [save, state] = useCall(async () => {
    const perKwh = price.trim() === '' ? null : parseNum(price);
    if (price.trim() !== '' && perKwh === null) return setErr('Enter a price per kWh of 0 or more, e.g. 0.30');
    const cur = currency.trim().toUpperCase();
    const usd = cur === 'USD' ? undefined : parseNum(rate);
    if (perKwh !== null && cur !== 'USD' && (usd === null || usd === undefined || usd === 0)) return setErr(`Enter what 1 ${cur} is worth in USD, e.g. 1.08`);
    setErr(undefined);
    onSaved(await getBridge().invoke('earnings.setElectricity', { perKwh, currency: cur, ...(usd ? { usdPerUnit: usd } : {}) }));
  });
  return (
    <form
      className="inline-form"
      onSubmit={(ev) => {
        ev.preventDefault();
        void save();
      }}
      data-testid="electricity-form"
    >
      <Field label="Electricity price per kWh (optional)" error={err}>
        {(id) => (
          <input id={id} inputMode="decimal" value={price} onChange={(ev) => setPrice(ev.target.value)} placeholder="0.30" data-testid="electricity-price" />
        )}
      </Field>
      <Field label="Currency">
        {(id) => <input id={id} value={currency} maxLength={3} onChange={(ev) => setCurrency(ev.target.value)} data-testid="electricity-currency" />}
      </Field>
      {currency.trim().toUpperCase() !== 'USD' && (
        <Field label={`1 ${currency.trim().toUpperCase() || '…'} in USD`}>
          {(id) => (
            <input id={id} inputMode="decimal" value={rate} onChange={(ev) => setRate(ev.target.value)} placeholder="1.08" data-testid="electricity-usd" />
          )}
        </Field>
      )}
      <BusyButton type="submit" data-testid="electricity-save" busy={state.pending} busyLabel="Saving…">
        Save
      </BusyButton>
      <ErrorText error={state.error} />
    </form>
  );
}

export function KeepCard({ o, onChange }: { o: EarningsOverview; onChange: (o: EarningsOverview) => void }) {
  const r = o.recent;
  const hours = Math.round(r.windowMs / 3_600_000);
  return (
    <Card title="What you keep" testId="keep-card">
      <div className="stats">
        <div className="stat">
          <div className="stat-value" data-testid="keep-earnings">
            {fmtMoney(r.earnings)}
          </div>
          <div className="stat-label">Earnings, last {hours >= 24 || hours === 0 ? '24 h' : `${hours} h`}</div>
        </div>
        <div className="stat">
          <div className="stat-value" data-testid="keep-cost">
            {o.electricity ? fmtMoney(r.cost) : '—'}
          </div>
          <div className="stat-label">Power ({fmtNumber(r.energyWh / 1000, 3)} kWh)</div>
        </div>
        <div className="stat">
          <div className="stat-value" data-testid="keep-net">
            {fmtMoney(r.net)}
          </div>
          <div className="stat-label">Net</div>
        </div>
      </div>
      {o.projection ? (
        <div data-testid="projection">
          <p>
            At the last 24 h rate: <strong data-testid="projection-day">{fmtMoney(o.projection.perDay)}/day</strong>,{' '}
            <strong data-testid="projection-month">{fmtMoney(o.projection.perMonth)}/month</strong> net.
          </p>
          <ul className="reasons muted" data-testid="projection-assumptions">
            {o.projection.assumptions.map((a) => (
              <li key={a}>{a}</li>
            ))}
          </ul>
        </div>
      ) : (
        <p className="muted" data-testid="projection">
          {o.projectionUnavailable}
        </p>
      )}
      <ElectricityForm o={o} onSaved={onChange} />
    </Card>
  );
}

export function RatesCard({ o }: { o: EarningsOverview }) {
  return (
    <Card
      title="Where the rates come from"
      testId="rates-card"
      actions={<AsOf asOf={o.rates.asOf} stale={o.rates.stale} error={o.rates.error} testId="rates-asof" />}
    >
      {!o.earningsEnabled && (
        <p className="banner banner-warn">
          Earnings are not enabled for this provider yet (the hub&apos;s provider status): requests are counted, and earn nothing until it is.
        </p>
      )}
      {o.pricing.length === 0 ? (
        <p className="empty">No models are announced yet.</p>
      ) : (
        <DataTable testId="pricing-table" columns={[{ label: 'Model' }, { label: 'Rate' }, { label: 'In / 1M', num: true }, { label: 'Out / 1M', num: true }]}>
          {o.pricing.map((p) => (
            <tr key={p.model} data-source={p.source}>
              <ModelCell model={p.model} />
              <td>
                {p.source === 'network'
                  ? 'the network pays'
                  : p.source === 'override'
                    ? 'your estimate (the network does not price it)'
                    : 'not priced: earns nothing'}
              </td>
              <td className="num">{p.inputPerM === null ? '—' : fmtMoney(p.inputPerM)}</td>
              <td className="num">{p.outputPerM === null ? '—' : fmtMoney(p.outputPerM)}</td>
            </tr>
          ))}
        </DataTable>
      )}
    </Card>
  );
}
