// Approvals only the owner can give (OWNER_CONFIRMATION_REQUIRED): a refused call carries the held change
// and how to approve it; the page waits for the `approval` event that says how it ended. The page itself
// can never approve: that happens in the desktop app's dialog, the agent's terminal or `swan-provider approve`.
import { BridgeError, type ApprovalView, type OwnerConfirmation } from '../../shared/bridge-error';
import { getBridge } from './index';

/** The approval a refused call carries, if it was refused for the owner's confirmation. */
export function approvalOf(err: unknown): OwnerConfirmation | undefined {
  return err instanceof BridgeError && err.code === 'OWNER_CONFIRMATION_REQUIRED' ? err.confirmation : undefined;
}

/** What a call the agent may hold for the owner answered: its value, or the approval it waits for. */
export type HeldOr<T> = { held: OwnerConfirmation; value?: undefined } | { held?: undefined; value: T };

/** Awaits a call the agent may hold for the owner's approval; any other refusal is thrown as it came. */
export async function unlessHeld<T>(call: Promise<T>): Promise<HeldOr<T>> {
  try {
    return { value: await call };
  } catch (e) {
    const held = approvalOf(e);
    if (!held) throw e;
    return { held };
  }
}

/**
 * Resolves with how the approval ended. Past its expiry (plus a little for the agent's own timer) without
 * an event, it ended as `expired` (the page may have missed the event while reconnecting).
 */
export function waitForApproval(c: OwnerConfirmation, signal?: AbortSignal): Promise<ApprovalView> {
  return new Promise<ApprovalView>((resolve, reject) => {
    const done = (v: ApprovalView) => {
      off();
      clearTimeout(timer);
      resolve(v);
    };
    const off = getBridge().onEvents((events) => {
      for (const e of events) if (e.type === 'approval' && e.approval.approvalId === c.approvalId) done(e.approval);
    });
    const timer = setTimeout(() => done({ approvalId: c.approvalId, kind: c.kind, status: 'expired' }), Math.max(0, c.expiresAt - Date.now()) + 5000);
    signal?.addEventListener('abort', () => {
      off();
      clearTimeout(timer);
      reject(signal.reason instanceof Error ? signal.reason : new Error('cancelled'));
    });
  });
}
