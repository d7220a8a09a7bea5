// `swan-provider approve [CODE] [--deny] [--yes]`: the owner's answer to a change the running agent holds for
// approval (src/core/owner/approvals.ts): the provider key to a new server, a new gateway key, an engine
// outside this network. It reads what is pending from the home's approvals/ folder, shows it, asks, and
// writes the decision there; only someone who can write into the home (the owner's own account) can.
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline/promises';
import { APPROVALS_DIR, normalizeCode, type ApprovalFile } from '../core/owner/approvals';
import { writeFileAtomic } from '../core/config/atomic-file';
import { forTerminal } from '../core/base/terminal';

export interface ApproveOptions {
  home: string;
  code?: string;
  deny?: boolean;
  yes?: boolean;
  /** How long to wait for the agent to act on the decision (ms). */
  waitMs?: number;
}

function readPending(dir: string): ApprovalFile[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir).filter((n) => n.endsWith('.json'));
  } catch {
    return [];
  }
  const out: ApprovalFile[] = [];
  for (const n of names) {
    try {
      const f = JSON.parse(fs.readFileSync(path.join(dir, n), 'utf8')) as ApprovalFile;
      if (typeof f.approvalId === 'string' && typeof f.code === 'string') out.push(f);
    } catch {
      /* half-written or foreign: skipped */
    }
  }
  return out;
}

function describe(f: ApprovalFile): string {
  const left = Math.max(0, Math.round((f.expiresAt - Date.now()) / 1000));
  return forTerminal(`${f.code}  ${f.summary}  (expires in ${Math.floor(left / 60)} min ${left % 60} s)`);
}

export async function approveCommand(o: ApproveOptions): Promise<number> {
  const dir = path.join(o.home, APPROVALS_DIR);
  const pending = readPending(dir).filter((f) => f.status === 'pending' && f.expiresAt > Date.now());
  if (!o.code) {
    if (pending.length === 0) {
      process.stdout.write(`Nothing waits for your approval (home ${o.home}).\n`);
      return 0;
    }
    for (const f of pending) process.stdout.write(`${describe(f)}\n`);
    process.stdout.write('Approve one with: swan-provider approve CODE   (or deny it with --deny)\n');
    return 0;
  }
  const code = normalizeCode(o.code);
  const f = pending.find((x) => x.code === code);
  if (!f) {
    process.stderr.write(
      `No approval ${code} is waiting (home ${o.home}). Approvals last 5 minutes and end when the agent stops; ask again from the console.\n`,
    );
    return 1;
  }
  const decision = o.deny ? 'deny' : 'approve';
  if (decision === 'approve' && !o.yes) {
    process.stdout.write(`${forTerminal(f.summary)}\n`);
    if (f.insecure.length) process.stdout.write(`Not encrypted: the connection to ${forTerminal(f.insecure.join(', '))} is plain ws:// or http://.\n`);
    process.stdout.write('The console asked for this. Approve only if you just did it yourself.\n');
    if (!process.stdin.isTTY) {
      process.stderr.write('Not a terminal: add --yes to approve without the question.\n');
      return 2;
    }
    const rl = readline.createInterface({ input: process.stdin, output: process.stdout });
    const answer = (await rl.question('Approve? [y/N] ')).trim().toLowerCase();
    rl.close();
    if (answer !== 'y' && answer !== 'yes') {
      process.stdout.write('Not approved. (It expires by itself; --deny ends it now.)\n');
      return 1;
    }
  }
  writeFileAtomic(path.join(dir, `${f.approvalId}.decision`), decision);
  // The agent reads decisions a few times a second; its file then says how it ended.
  const until = Date.now() + (o.waitMs ?? 15_000);
  while (Date.now() < until) {
    const now = readPending(dir).find((x) => x.approvalId === f.approvalId);
    if (now && now.status !== 'pending') {
      if (now.status === 'approved') process.stdout.write(`Approved: ${forTerminal(f.summary)}\n`);
      else if (now.status === 'denied') process.stdout.write('Denied: nothing was changed.\n');
      else
        process.stdout.write(
          `${now.status === 'failed' ? `Approved, but the change failed: ${forTerminal(now.error ?? '')}` : `Ended as ${now.status}: nothing was changed.`}\n`,
        );
      return now.status === 'failed' ? 1 : 0;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  process.stderr.write('The agent did not act on the decision in time; is it still running with this home?\n');
  return 1;
}
