// The desktop app's channel for owner approvals (src/core/owner/approvals.ts): a native dialog, which no
// web page (nor the renderer) can answer. A dialog whose approval ended meanwhile (expired, replaced by a
// newer request) is closed.
import { dialog, type BrowserWindow } from 'electron';
import type { OwnerApprovals } from '../core/owner/approvals';
import type { Logger } from '../core/base/log';
import { approvalPrompt } from './approval-prompt';

export function installApprovalDialogs(approvals: OwnerApprovals, window: () => BrowserWindow | undefined, log: Logger): () => void {
  const open = new Map<string, AbortController>();
  const onRequested: Parameters<typeof approvals.on<'requested'>>[1] = (c) => {
    const ac = new AbortController();
    open.set(c.approvalId, ac);
    const win = window();
    const options = { ...approvalPrompt(c), signal: ac.signal };
    const shown = win && !win.isDestroyed() ? dialog.showMessageBox(win, options) : dialog.showMessageBox(options);
    shown
      .then(({ response }) => {
        if (ac.signal.aborted) return;
        return approvals.decide(c.approvalId, response === 1 ? 'approve' : 'deny', 'the desktop dialog');
      })
      .catch((e: unknown) => log.warn(`The approval dialog failed: ${e instanceof Error ? e.message : String(e)}`))
      .finally(() => open.delete(c.approvalId));
  };
  const onSettled: Parameters<typeof approvals.on<'settled'>>[1] = (v) => {
    open.get(v.approvalId)?.abort();
    open.delete(v.approvalId);
  };
  approvals.on('requested', onRequested);
  approvals.on('settled', onSettled);
  return () => {
    approvals.off('requested', onRequested);
    approvals.off('settled', onSettled);
    for (const ac of open.values()) ac.abort();
    open.clear();
  };
}
