// The words of the native dialog that asks the owner to approve a held change (OWNER_CONFIRMATION_REQUIRED).
// No electron import here, so test/main/approval-prompt.test.ts runs it in plain Node; approval-dialog.ts
// shows it. "Deny" is the default and what Escape means: a dialog the owner did not expect is refused.
import type { OwnerConfirmation } from '../shared/bridge-error';

export interface ApprovalPrompt {
  type: 'warning';
  title: string;
  message: string;
  detail: string;
  buttons: [string, string];
  /** Index of Deny. */
  defaultId: 0;
  cancelId: 0;
  noLink: true;
}

const TITLES: Record<OwnerConfirmation['kind'], string> = {
  key_destination: 'Send your provider key to a new server?',
  gateway_key: 'Create a gateway key?',
  engine_endpoint: 'Add an engine outside your network?',
  fleet_token: 'Let another console read this rig?',
  payout_address: 'Change where this provider is paid?',
};

export function approvalPrompt(c: OwnerConfirmation): ApprovalPrompt {
  const insecure = c.insecure.length
    ? `\n\nNot encrypted: the connection to ${c.insecure.join(', ')} is plain ws:// or http://, so anyone on the network path can read the key.`
    : '';
  return {
    type: 'warning',
    title: 'Swan Provider Console',
    message: TITLES[c.kind],
    detail: `${c.summary}${insecure}\n\nThe console asked for this. If you did not just do it yourself, choose Deny. Approval ${c.code}.`,
    buttons: ['Deny', 'Allow'],
    defaultId: 0,
    cancelId: 0,
    noLink: true,
  };
}
