// The Fleet page: this rig and the rigs the owner added, as this rig's agent reads them (every few
// seconds, over each rig's read-only fleet API): link state, models and their health, GPUs, requests,
// tokens and earnings today and this month, alerts; the sums across rigs; one click into a rig's own
// console. A rig that stops answering stays, marked unreachable since when, with its last figures.
// Below: the read-only tokens that let other consoles read this rig.
import { useEffect, useState } from 'react';
import type { FleetRigView, FleetTokenView, FleetView, RigSummary } from '../../shared/fleet';
import { getBridge } from '../bridge';
import { useApprovedCreate } from '../lib/use-approved-create';
import { CredentialList } from '../components/CredentialList';
import { Badge, HealthBadge, LINK_LABEL } from '../components/Badge';
import { Card, Stat } from '../components/Card';
import { DataTable } from '../components/DataTable';
import { ErrorText, StatusNote, TextField } from '../components/Field';
import { fmtAgo, fmtClock, fmtDateTime, fmtInt, fmtMoney, fmtPercent } from '../lib/format';
import { useCall, useFetch } from '../lib/use-call';
import { BusyButton } from '../components/BusyButton';

/** The fleet as the agent last read it: fetched once, then kept current by the agent's `fleet` events. */
function useFleet(): { fleet: FleetView | undefined; error: string | null; set: (v: FleetView) => void } {
  const first = useFetch(() => getBridge().invoke('fleet.list', {}), []);
  const [live, setLive] = useState<FleetView | undefined>(undefined);
  useEffect(
    () =>
      getBridge().onEvents((events) => {
        for (const e of events) if (e.type === 'fleet') setLive(e.fleet);
      }),
    [],
  );
  // Relative times ("2 min ago") move on even when nothing new arrives.
  const [, tick] = useState(0);
  useEffect(() => {
    const t = setInterval(() => tick((n) => n + 1), 5000);
    return () => clearInterval(t);
  }, []);
  const fleet = live && (!first.data || live.updatedAt >= first.data.updatedAt) ? live : first.data;
  return { fleet, error: first.error, set: setLive };
}

function RigStatus({ rig }: { rig: FleetRigView }) {
  const s = rig.summary;
  if (rig.status === 'ok' && s) {
    const state = s.link.state;
    const v = s.verdict;
    // The rig's own verdict, as its console shows it; the link alone never reads as "Serving".
    return (
      <span data-testid="rig-status" data-status="ok" data-link={state} data-verdict={v?.state ?? 'unknown'} title={v?.headline}>
        {v ? <Badge tone={v.tone}>{v.label}</Badge> : <Badge tone="muted">Verdict unknown</Badge>}
        {v && v.state !== 'serving' && (
          <span className="muted small" data-testid="rig-headline">
            {' '}
            {v.headline}
          </span>
        )}
        {!v && (
          <span className="muted small" data-testid="rig-headline">
            {' '}
            This rig runs an older version that does not report whether it is routed and earning. Link: {s.paused ? 'Paused' : LINK_LABEL[state]}.
          </span>
        )}
      </span>
    );
  }
  const label =
    rig.status === 'unreachable' ? 'Unreachable' : rig.status === 'refused' ? 'Token refused' : rig.status === 'pending' ? 'Reading…' : 'Unreadable';
  return (
    <span data-testid="rig-status" data-status={rig.status}>
      <Badge tone={rig.status === 'pending' ? 'muted' : 'bad'}>{label}</Badge>
      {rig.status !== 'pending' && (
        <span className="muted small block" data-testid="rig-since" title={fmtDateTime(rig.since)}>
          since {fmtClock(rig.since)} ({fmtAgo(rig.since)})
        </span>
      )}
      {rig.lastSeenAt !== undefined && rig.status !== 'pending' && (
        <span className="muted small block" title={fmtDateTime(rig.lastSeenAt)}>
          last answer {fmtClock(rig.lastSeenAt)}
        </span>
      )}
    </span>
  );
}

function Models({ s }: { s: RigSummary }) {
  const served = s.models.filter((m) => m.enabled);
  if (served.length === 0) return <span className="muted small">none served</span>;
  return (
    <ul className="plain-list">
      {served.map((m) => (
        <li key={m.id} data-testid="rig-model" data-model={m.id}>
          <span className="mono small">{m.id}</span> <HealthBadge health={m.health} />
          {m.inFlight > 0 && <span className="muted small"> {m.inFlight} running</span>}
          {m.queued > 0 && <span className="muted small">, {m.queued} queued</span>}
        </li>
      ))}
    </ul>
  );
}

function Gpus({ s }: { s: RigSummary }) {
  if (s.gpus.length === 0) return <span className="muted small">no GPU found</span>;
  return (
    <ul className="plain-list">
      {s.gpus.map((g) => (
        <li key={g.index} data-testid="rig-gpu">
          <span className="small">{g.model}</span>
          <span className="muted small block">
            {g.utilization === null ? 'no live figures' : `${fmtPercent(g.utilization, 0)} busy`}
            {g.temperatureC !== null && ` · ${fmtInt(g.temperatureC)} °C`}
            {g.powerW !== null && ` · ${fmtInt(g.powerW)} W`}
          </span>
        </li>
      ))}
    </ul>
  );
}

/** The rig's alerts of the last 24 hours, newest first, folded under their count and the latest's title. */
function Alerts({ s }: { s: RigSummary }) {
  const [latest] = s.alerts;
  return (
    <details data-testid="rig-alerts" data-count={s.alerts.length}>
      <summary>
        <Badge tone="warn">{s.alerts.length === 1 ? '1 alert' : `${s.alerts.length} alerts`}</Badge> <span className="small">{latest!.title}</span>
      </summary>
      <ul className="plain-list">
        {s.alerts.map((a) => (
          <li key={a.id} className="small">
            <span className="muted">{fmtClock(a.ts)}</span> {a.title}: {a.text}
          </li>
        ))}
      </ul>
    </details>
  );
}

function RigRow({ rig, onRemoved }: { rig: FleetRigView; onRemoved: (v: FleetView) => void }) {
  const s = rig.summary;
  const [open, openState] = useCall(async () => {
    const link = await getBridge().invoke('fleet.openConsole', { id: rig.id });
    window.open(link.url, '_blank', 'noopener,noreferrer');
  });
  const [remove, removeState] = useCall(async () => {
    onRemoved(await getBridge().invoke('fleet.remove', { id: rig.id }));
  });
  return (
    <>
      <tr data-testid="fleet-rig" data-rig-id={rig.id} data-self={rig.self} data-status={rig.status} data-node-name={s?.nodeName ?? ''}>
        <th scope="row">
          <span data-testid="rig-label">{rig.label}</span>
          {rig.self && <span className="muted small"> (this rig)</span>}
          {s && s.nodeName !== rig.label && <span className="muted small block">{s.nodeName}</span>}
          {!rig.self && <span className="muted small block mono">{rig.url}</span>}
          {rig.insecure && (
            <span className="block">
              <Badge tone="warn" testId="rig-insecure">
                plain HTTP
              </Badge>
            </span>
          )}
          {s && s.alerts.length > 0 && <Alerts s={s} />}
        </th>
        <td>
          <RigStatus rig={rig} />
        </td>
        <td>{s ? <Models s={s} /> : '—'}</td>
        <td>{s ? <Gpus s={s} /> : '—'}</td>
        <td className="num">
          {s ? (
            <>
              <span data-testid="rig-requests-today">{fmtInt(s.today.requests)}</span> requests
              <span className="muted small block">
                <span data-testid="rig-tokens-in-today">{fmtInt(s.today.tokensIn)}</span> in /{' '}
                <span data-testid="rig-tokens-out-today">{fmtInt(s.today.tokensOut)}</span> out
              </span>
            </>
          ) : (
            '—'
          )}
        </td>
        <td className="num">
          {s ? (
            <>
              <span data-testid="rig-earnings-today">{fmtMoney(s.today.earnings)}</span> today
              <span className="muted small block">
                <span data-testid="rig-earnings-month">{fmtMoney(s.month.earnings)}</span> this month
              </span>
            </>
          ) : (
            '—'
          )}
        </td>
        <td>
          {!rig.self && (
            <span className="form-actions">
              <button
                type="button"
                className="small-button"
                onClick={() => void open()}
                disabled={openState.pending}
                data-testid="rig-open"
                aria-label={`Open the console of ${rig.label}`}
                title={
                  s?.access === 'full'
                    ? "Opens this rig's own console, signed in"
                    : "Opens this rig's own console; sign in there (it was added with a read-only token)"
                }
              >
                Open
              </button>
              <button
                type="button"
                className="small-button danger"
                onClick={() => void remove()}
                disabled={removeState.pending}
                data-testid="rig-remove"
                aria-label={`Remove ${rig.label} from the fleet`}
              >
                Remove
              </button>
            </span>
          )}
        </td>
      </tr>
      {(rig.error || openState.error || removeState.error) && (
        <tr data-testid="rig-problem">
          <td colSpan={COLUMNS.length} className="small">
            {rig.error && (
              <span className={rig.status === 'ok' ? undefined : 'warn-text'}>
                {rig.label}: {rig.error}
              </span>
            )}
            <ErrorText error={openState.error ?? removeState.error} />
          </td>
        </tr>
      )}
    </>
  );
}

const COLUMNS = [
  { label: 'Rig' },
  { label: 'Status' },
  { label: 'Models' },
  { label: 'GPUs' },
  { label: 'Today', num: true },
  { label: 'Earned', num: true },
  { label: 'Actions', srOnly: true },
];

function Totals({ fleet }: { fleet: FleetView }) {
  const t = fleet.totals;
  return (
    <Card title="All rigs" testId="fleet-totals">
      <div className="stats">
        <Stat label="Rigs answering" value={`${t.reachable} of ${t.rigs}`} testId="fleet-reachable" />
        <Stat label="Serving" value={fmtInt(t.serving)} testId="fleet-serving" />
        <Stat label="GPUs" value={fmtInt(t.gpus)} testId="fleet-gpus" />
        <Stat label="Models served" value={fmtInt(t.models)} testId="fleet-models" />
        <Stat label="Requests today" value={fmtInt(t.today.requests)} testId="fleet-requests-today" />
        <Stat label="Tokens in today" value={fmtInt(t.today.tokensIn)} testId="fleet-tokens-in-today" />
        <Stat label="Tokens out today" value={fmtInt(t.today.tokensOut)} testId="fleet-tokens-out-today" />
        <Stat label="Earnings today" value={fmtMoney(t.today.earnings)} testId="fleet-earnings-today" />
        <Stat label="Earnings this month" value={fmtMoney(t.month.earnings)} testId="fleet-earnings-month" />
      </div>
      {t.stale > 0 && (
        <p className="muted small" data-testid="fleet-stale">
          {t.stale === 1
            ? 'One rig does not answer: its last known figures are in these sums.'
            : `${t.stale} rigs do not answer: their last known figures are in these sums.`}
        </p>
      )}
    </Card>
  );
}

function AddRig({ onAdded }: { onAdded: (v: FleetView) => void }) {
  const [url, setUrl] = useState('');
  const [token, setToken] = useState('');
  const [label, setLabel] = useState('');
  const [note, setNote] = useState<string | null>(null);
  const [add, state] = useCall(async () => {
    const v = await getBridge().invoke('fleet.add', {
      url: url.trim(),
      ...(token.trim() ? { token: token.trim() } : {}),
      ...(label.trim() ? { label: label.trim() } : {}),
    });
    onAdded(v);
    const added = v.rigs[v.rigs.length - 1];
    setNote(`Added ${added?.label ?? 'the rig'}.`);
    setUrl('');
    setToken('');
    setLabel('');
  });
  return (
    <Card title="Add a rig" testId="fleet-add">
      <p className="muted small">
        Another rig running the console (<span className="mono">swan-provider run --console …</span>). On that rig, make a read-only token with{' '}
        <span className="mono">swan-provider fleet token create</span> (or on its Fleet page), or use its console token (the{' '}
        <span className="mono">?token=…</span> of its bookmark: that one also opens its console signed in). Off your network, reach it over TLS or an SSH tunnel
        (docs/fleet.md).
      </p>
      <form
        className="inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          setNote(null);
          void add();
        }}
      >
        <TextField
          label="Console address"
          value={url}
          onChange={setUrl}
          placeholder="http://192.168.1.20:7777"
          inputTestId="fleet-add-url"
          autoComplete="off"
          spellCheck={false}
          required
        />
        <TextField
          label="Token"
          value={token}
          onChange={setToken}
          type="password"
          inputTestId="fleet-add-token"
          autoComplete="off"
          hint="Kept by this rig's agent (keychain or a private file), never shown again."
        />
        <TextField label="Name (optional)" value={label} onChange={setLabel} inputTestId="fleet-add-label" maxLength={64} placeholder="garage" />
        <div className="form-actions">
          <BusyButton type="submit" disabled={!url.trim()} data-testid="fleet-add-submit" busy={state.pending} busyLabel="Reading the rig…">
            Add rig
          </BusyButton>
          <StatusNote text={note} testId="fleet-add-note" />
        </div>
      </form>
      <ErrorText error={state.error} testId="fleet-add-error" />
    </Card>
  );
}

const TOKEN_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

function ShareThisRig() {
  const list = useFetch(() => getBridge().invoke('fleet.tokens.list', {}), []);
  const [name, setName] = useState('');
  const [made, setMade] = useState<{ name: string; token: string } | null>(null);
  const [tokens, setTokens] = useState<FleetTokenView[] | undefined>(undefined);
  const shown = tokens ?? list.data;
  const {
    create,
    state: createState,
    confirm,
  } = useApprovedCreate(
    async (n, grant) => {
      if (!TOKEN_NAME.test(n))
        throw new Error('A token name uses only letters, digits, dots, dashes or underscores (1 to 64 characters), for example office-pc.');
      return getBridge().invoke('fleet.tokens.create', { name: n, ...(grant ? { grant } : {}) });
    },
    async (r) => {
      setMade({ name: r.name, token: r.token });
      setName('');
      setTokens(await getBridge().invoke('fleet.tokens.list', {}));
    },
  );
  const [revoke, revokeState] = useCall(async (n: string) => {
    setTokens(await getBridge().invoke('fleet.tokens.revoke', { name: n }));
    setMade((m) => (m?.name === n ? null : m));
  });
  const desktop = getBridge().transport === 'ipc';
  return (
    <Card title="Let other consoles read this rig" testId="fleet-tokens">
      <p className="muted small">
        A fleet token reads this rig&apos;s figures and nothing else: it opens no console and cannot change settings, keys or models.
        {desktop
          ? ' Other consoles read rigs that serve the browser console (swan-provider run --console …); the desktop app reads other rigs but serves no console itself.'
          : ` Other consoles add this rig at ${window.location.origin} with a token from here.`}
      </p>
      {made && (
        <p className="banner banner-info" data-testid="fleet-token-made">
          Token <span className="mono">{made.name}</span>, shown this once:{' '}
          <span className="mono selectable" data-testid="fleet-token-value">
            {made.token}
          </span>
        </p>
      )}
      <ErrorText error={list.error} />
      <CredentialList
        items={shown}
        empty="No fleet tokens yet."
        testId="fleet-token"
        detail={(t) => `read-only · made ${fmtDateTime(t.createdAt)}${t.lastUsedAt ? ` · last read ${fmtAgo(t.lastUsedAt)}` : ''}`}
        onRevoke={(n) => void revoke(n)}
        revoking={revokeState.pending}
        revokeLabel={(n) => `Revoke the fleet token ${n}`}
      />
      <form
        className="inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          void create(name.trim());
        }}
      >
        <TextField label="Token name" value={name} onChange={setName} inputTestId="fleet-token-name" placeholder="office-pc" maxLength={64} />
        <div className="form-actions">
          <button type="submit" disabled={createState.pending || !name.trim()} data-testid="fleet-token-create">
            Make a read-only token
          </button>
        </div>
      </form>
      {confirm}
      <ErrorText error={createState.error ?? revokeState.error} />
    </Card>
  );
}

export function Fleet() {
  const { fleet, error, set } = useFleet();
  return (
    <div className="page" data-testid="page-fleet">
      <h1>Fleet</h1>
      <p className="lead">
        This rig and the rigs you added, read every few seconds by this rig&apos;s agent. A rig that stops answering stays here, marked unreachable.
      </p>
      <ErrorText error={error} />
      {fleet && <Totals fleet={fleet} />}
      {fleet && (
        <Card title="Rigs" testId="fleet-rigs">
          <DataTable dense testId="fleet-table" columns={COLUMNS}>
            {fleet.rigs.map((r) => (
              <RigRow key={r.id} rig={r} onRemoved={set} />
            ))}
          </DataTable>
          {fleet.rigs.length === 1 && <p className="muted small">Only this rig so far: add another below.</p>}
        </Card>
      )}
      <div className="grid-2">
        <AddRig onAdded={set} />
        <ShareThisRig />
      </div>
    </div>
  );
}
