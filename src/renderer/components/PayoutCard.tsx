// Payout & activation: where this provider stands on the way to earning (pending → under review → approved →
// activating → active), the payout (beneficiary) address, the owner address set once, asking for approval and
// the collateral step. The Go provider offers these only from its CLI or the web dashboard. A new payout or
// owner address waits for the owner's approval given outside the console (the agent holds it); every
// refusal shows the platform's answer with its stable code (data-code).
import { useState } from 'react';
import type { AccountFailure, AccountRead, ProviderAccountView, ProviderAddressesView } from '../../shared/views/account';
import type { ProviderStatusView } from '../../shared/views/snapshot';
import type { GpuInfo } from '../../shared/types';
import { getBridge } from '../bridge';
import { useApprovedCreate } from '../lib/use-approved-create';
import { useCall, useFetch } from '../lib/use-call';
import { useStore } from '../store/store';
import { Card } from './Card';
import { ErrorText, TextField } from './Field';
import { BusyButton } from './BusyButton';

const STAGES: Array<{ status: string; label: string }> = [
  { status: 'pending', label: 'Registered' },
  { status: 'under_review', label: 'Under review' },
  { status: 'approved', label: 'Approved: collateral next' },
  { status: 'activating', label: 'Activating' },
  { status: 'active', label: 'Active' },
];

/** Where the provider stands, from the provider status; 'unknown' when the platform has not said. */
function standing(v: ProviderStatusView | undefined): { at: number; word: string; code: string } {
  const s = v?.status;
  if (!s) return { at: -1, word: 'Unknown: the platform has not said yet', code: 'unknown' };
  if (s === 'suspended') return { at: -1, word: 'Suspended by the platform: see the provider status for why', code: 'suspended' };
  const at = STAGES.findIndex((x) => x.status === s);
  return at < 0 ? { at: -1, word: `The platform says "${s}"`, code: 'other' } : { at, word: STAGES[at]!.label, code: s };
}

/** "2× NVIDIA GeForce RTX 4090, 24 GB each": what the approval form suggests for the hardware. */
function hardwareSummary(gpus: GpuInfo[]): string {
  if (gpus.length === 0) return '';
  const first = gpus[0]!;
  const same = gpus.every((g) => g.model === first.model);
  const vram = first.vramTotalMb > 0 ? `, ${Math.round(first.vramTotalMb / 1024)} GB${gpus.length > 1 ? ' each' : ''}` : '';
  return same ? `${gpus.length > 1 ? `${gpus.length}× ` : ''}${first.model}${vram}` : gpus.map((g) => g.model).join(' + ');
}

function Failure({ r, testId }: { r: AccountFailure | undefined; testId: string }) {
  if (!r) return null;
  return (
    <p className="error-text" role="alert" data-testid={testId} data-code={r.code}>
      {r.message}
    </p>
  );
}

function Addresses({ v }: { v: ProviderAddressesView }) {
  const shown = (a: string, testId: string, none: string) => (
    <code className="mono" data-testid={testId}>
      {a || none}
    </code>
  );
  return (
    <dl className="plain-list small">
      <dt>Payout address</dt>
      <dd>{shown(v.beneficiaryAddress, 'payout-beneficiary', 'not set (payouts go to the owner address)')}</dd>
      <dt>Owner address</dt>
      <dd>{shown(v.ownerAddress, 'payout-owner', 'not set yet')}</dd>
      {v.workerAddress && (
        <>
          <dt>Worker address</dt>
          <dd>{shown(v.workerAddress, 'payout-worker', '')}</dd>
        </>
      )}
    </dl>
  );
}

/** One address form whose save waits for the owner's approval; `confirmFirst` asks "cannot be changed" before. */
function AddressForm(props: {
  label: string;
  hint: string;
  testId: string;
  save: (address: string, grant?: string) => Promise<AccountRead<ProviderAddressesView>>;
  done: () => void;
  confirmFirst?: string;
}) {
  const [address, setAddress] = useState('');
  const [sure, setSure] = useState(false);
  const [result, setResult] = useState<AccountFailure | undefined>();
  const [savedTo, setSavedTo] = useState('');
  const { create, state, confirm } = useApprovedCreate(props.save, (r) => {
    if (r.ok) {
      setResult(undefined);
      setSavedTo(address.trim());
      setAddress('');
      setSure(false);
      props.done();
    } else setResult(r);
  });
  const blocked = props.confirmFirst !== undefined && !sure;
  return (
    <form
      className="inline-form"
      data-testid={props.testId}
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        if (!blocked) void create(address.trim());
      }}
    >
      <TextField
        label={props.label}
        hint={props.hint}
        testId={`${props.testId}-field`}
        inputTestId={`${props.testId}-input`}
        value={address}
        placeholder="0x…"
        autoComplete="off"
        spellCheck={false}
        onChange={(v) => setAddress(v)}
      />
      {props.confirmFirst !== undefined && address.trim() !== '' && (
        <label className="checkbox-row" data-testid={`${props.testId}-permanent`}>
          <input type="checkbox" checked={sure} onChange={(e) => setSure(e.target.checked)} data-testid={`${props.testId}-permanent-input`} />{' '}
          {props.confirmFirst}
        </label>
      )}
      <BusyButton
        type="submit"
        className="small-button"
        busy={state.pending}
        busyLabel="Saving…"
        disabled={address.trim() === '' || blocked}
        data-testid={`${props.testId}-save`}
      >
        Save
      </BusyButton>
      {confirm}
      {savedTo && !result && (
        <span className="muted small" role="status" data-testid={`${props.testId}-saved`}>
          Saved on the platform: {savedTo}.
        </span>
      )}
      <Failure r={result} testId={`${props.testId}-error`} />
      <ErrorText error={state.error} />
    </form>
  );
}

function ApprovalForm({ done }: { done: () => void }) {
  const gpus = useStore((s) => s.snapshot?.gpu.gpus ?? []);
  const [hardware, setHardware] = useState(() => hardwareSummary(gpus));
  const [email, setEmail] = useState('');
  const [answer, setAnswer] = useState<AccountRead<{ message: string }> | undefined>();
  const [ask, state] = useCall(async () => {
    const r = await getBridge().invoke('account.requestApproval', { hardwareSummary: hardware, contactEmail: email });
    setAnswer(r);
    if (r.ok) done();
  });
  return (
    <form
      className="inline-form"
      data-testid="approval-form"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        void ask();
      }}
    >
      <TextField
        label="Hardware"
        hint="What the platform reviews, e.g. 2× RTX 4090, 128 GB RAM."
        testId="approval-hardware-field"
        inputTestId="approval-hardware"
        value={hardware}
        onChange={setHardware}
      />
      <TextField
        label="Contact e-mail"
        hint="Where the platform writes about the approval."
        testId="approval-email-field"
        inputTestId="approval-email"
        type="email"
        value={email}
        onChange={setEmail}
      />
      <BusyButton type="submit" className="small-button" busy={state.pending} busyLabel="Asking…" data-testid="approval-ask">
        Ask for approval
      </BusyButton>
      {answer?.ok && (
        <span className="muted small" role="status" data-testid="approval-asked">
          {answer.value.message}
        </span>
      )}
      <Failure r={answer && !answer.ok ? answer : undefined} testId="approval-error" />
      <ErrorText error={state.error} />
    </form>
  );
}

function Collateral({ r }: { r: ProviderAccountView['collateral'] }) {
  if (!r.ok) return <Failure r={r} testId="collateral-error" />;
  if (r.value.length === 0) return <p className="muted small">The platform lists no collateral chain right now.</p>;
  return (
    <ul className="plain-list small" data-testid="collateral-chains">
      {r.value.map((c) => (
        <li key={`${c.chainId}-${c.contractAddress}`} data-chain={c.chainId}>
          <strong>{c.chainName}</strong>: at least{' '}
          <span data-testid="collateral-min">
            {c.minCollateral} {c.tokenSymbol}
          </span>{' '}
          to the contract <code className="mono">{c.contractAddress}</code>, from the owner wallet.
          {c.explorerUrl && (
            <>
              {' '}
              <a href={c.explorerUrl} target="_blank" rel="noreferrer noopener">
                Explorer
              </a>
            </>
          )}
          {c.faucetUrl && (
            <>
              {' · '}
              <a href={c.faucetUrl} target="_blank" rel="noreferrer noopener">
                Test tokens
              </a>
            </>
          )}
        </li>
      ))}
    </ul>
  );
}

export function PayoutCard() {
  const status = useStore((s) => s.snapshot?.providerStatus);
  const hasKey = useStore((s) => s.snapshot?.hasKey ?? false);
  const { data, error, loading, reload } = useFetch(() => getBridge().invoke('account.get', {}), [hasKey]);
  const stand = standing(status);
  const addresses = data?.addresses;
  const ownerSet = addresses?.ok === true && addresses.value.ownerAddress !== '';
  return (
    <Card
      title="Payout & activation"
      testId="payout-card"
      actions={
        <button type="button" className="small-button" onClick={reload} disabled={loading} data-testid="payout-refresh">
          Check again
        </button>
      }
    >
      <ol className="stage-row small" data-testid="payout-stage" data-stage={stand.code}>
        {STAGES.map((s, i) => (
          <li key={s.status} data-state={i < stand.at ? 'done' : i === stand.at ? 'current' : 'todo'}>
            {s.label}
          </li>
        ))}
      </ol>
      <p className="small" data-testid="payout-stage-word">
        Where this provider stands: {stand.word}.
      </p>
      {addresses?.ok && <Addresses v={addresses.value} />}
      {addresses && !addresses.ok && <Failure r={addresses} testId="payout-error" />}
      <ErrorText error={error} />
      {addresses?.ok && (
        <>
          <AddressForm
            label="Payout address"
            hint="The wallet your earnings are paid to. You can change it at any time; the change waits for your approval outside the console."
            testId="payout-beneficiary-form"
            save={(address, grant) => getBridge().invoke('account.setBeneficiary', { address, ...(grant ? { grant } : {}) })}
            done={reload}
          />
          {!ownerSet && (
            <AddressForm
              label="Owner address (set once)"
              hint="The wallet that owns this provider and deposits the collateral. The platform never changes it once set."
              testId="payout-owner-form"
              confirmFirst="I understand the owner address cannot be changed later."
              save={(address, grant) => getBridge().invoke('account.setOwner', { address, permanent: true, ...(grant ? { grant } : {}) })}
              done={reload}
            />
          )}
        </>
      )}
      {(stand.code === 'pending' || stand.code === 'unknown') && hasKey && <ApprovalForm done={reload} />}
      {data && (
        <>
          <h3>Collateral</h3>
          <Collateral r={data.collateral} />
        </>
      )}
    </Card>
  );
}
