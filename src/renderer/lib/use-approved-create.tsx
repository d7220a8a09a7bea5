// A named credential the agent makes only with the owner's approval given outside the console (a gateway
// key, a fleet token: either outlives the console session that asks for it). The first call is refused
// with the held change, which is shown until it ends; once approved, the same name is made again with the
// grant that refusal carried (a secret only this page's call got back).
import { useState, type ReactNode } from 'react';
import type { OwnerConfirmation } from '../../shared/bridge-error';
import { unlessHeld } from '../bridge/approvals';
import { KeyDestinationConfirm } from '../components/KeyDestinationConfirm';
import { useCall, type CallState } from './use-call';

export function useApprovedCreate<R>(
  make: (name: string, grant?: string) => Promise<R>,
  made: (r: R) => void | Promise<void>,
): { create: (name: string) => Promise<void>; state: CallState; confirm: ReactNode } {
  const [approval, setApproval] = useState<{ name: string; confirmation: OwnerConfirmation } | null>(null);
  const [run, state] = useCall(async (name: string, grant?: string) => {
    const r = await unlessHeld(make(name, grant));
    if (r.held) {
      setApproval({ name, confirmation: r.held });
      return;
    }
    setApproval(null);
    await made(r.value);
  });
  const confirm = approval && (
    <KeyDestinationConfirm
      confirmation={approval.confirmation}
      retypeHint=""
      onDone={(v) => (v.status === 'approved' ? void run(approval.name, approval.confirmation.grant) : undefined)}
      onCancel={() => setApproval(null)}
    />
  );
  const create = async (name: string): Promise<void> => {
    await run(name);
  };
  return { create, state, confirm };
}
