// The agent's own terminal as an approval channel (src/core/owner/approvals.ts): when the console asks for
// something only the owner may allow, the terminal that runs `swan-provider run` says so, and the owner
// types `approve CODE` (or `deny CODE`) there. Typing the code, not just pressing Enter, keeps a stray
// key press from approving anything. Other lines go to `other` (Enter prints a fresh console link).
import type { OwnerApprovals } from '../core/owner/approvals';
import { forTerminal } from '../core/base/terminal';

export function attachApprovalTerminal(
  approvals: OwnerApprovals,
  io: { input: NodeJS.ReadableStream; write: (text: string) => void; other?: (line: string) => void },
): () => void {
  const onRequested: Parameters<typeof approvals.on<'requested'>>[1] = (c) => {
    const mins = Math.max(1, Math.round((c.expiresAt - Date.now()) / 60_000));
    io.write(
      `\n${forTerminal(`The console asks: ${c.summary}`)}\n  To allow it, type here:  approve ${c.code}   (or: deny ${c.code}). It expires in ${mins} minutes; if you did not just ask for this yourself, deny it.\n`,
    );
  };
  let buffered = '';
  const onData = (chunk: Buffer | string) => {
    buffered += chunk.toString();
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl).replace(/\r$/, '');
      buffered = buffered.slice(nl + 1);
      const m = /^\s*(approve|deny)\s+(\S+)\s*$/i.exec(line);
      if (!m) {
        io.other?.(line);
        continue;
      }
      const decision = (m[1] as string).toLowerCase() as 'approve' | 'deny';
      void approvals.decide(m[2] as string, decision, 'the agent terminal').then((v) => {
        if (!v) io.write(`No approval ${forTerminal(m[2] as string)} is waiting (they last 5 minutes).\n`);
        else if (v.status === 'approved') io.write('Approved.\n');
        else if (v.status === 'failed') io.write(`Approved, but the change failed: ${forTerminal(v.error ?? '')}\n`);
        else io.write('Denied: nothing was changed.\n');
      });
    }
    if (buffered.length > 4096) buffered = '';
  };
  approvals.on('requested', onRequested);
  io.input.on('data', onData);
  return () => {
    approvals.off('requested', onRequested);
    io.input.off('data', onData);
  };
}
