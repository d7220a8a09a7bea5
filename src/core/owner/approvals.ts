// Owner approvals: what a console caller may ask for but only the owner may allow — sending the provider
// key to a new host (or over plain ws:// / http:// to another machine), minting a gateway key, adding an
// engine endpoint outside this machine and its network. The caller gets a refusal carrying an approval
// (OWNER_CONFIRMATION_REQUIRED); the change is held here and applied when the owner approves it through a
// channel no web page can reach:
// - the desktop app's native dialog (src/main/approval-dialog.ts listens to `requested`);
// - the agent's own terminal (`approve CODE` typed where `swan-provider run` runs);
// - `swan-provider approve CODE`, which writes a decision file into the home's approvals/ folder (0700):
//   whoever can write there is the owner's own account already, as with the Docker socket's permissions.
// Never through the bridge: a field of the same request, or another bridge call, proves nothing about
// who sent it. Approvals expire (TTL_MS); one kind has at most one pending approval (a new request
// replaces the old one, which expires), so a flood of requests cannot stack dialogs.
import crypto from 'node:crypto';
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import type { ApprovalKind, ApprovalStatus, ApprovalView, OwnerConfirmation } from '../../shared/bridge-error';
import { writeJsonAtomic } from '../config/atomic-file';
import { defaultHome, DIR_MODE } from '../config/home';
import type { Logger } from '../base/log';

/** How long an approval waits for the owner. */
export const APPROVAL_TTL_MS = 5 * 60_000;
/** How often the approvals folder is read for decisions, while anything is pending. */
const POLL_MS = 200;
/** How long a settled approval's file stays, so `swan-provider approve` can read the outcome. */
const KEEP_SETTLED_MS = 60_000;
/** Codes use letters and digits that cannot be misread (no 0/O, 1/I/L). */
const CODE_ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';

export const APPROVALS_DIR = 'approvals';

/** What the approvals folder holds per approval (`<id>.json`); the CLI reads it. */
export interface ApprovalFile extends OwnerConfirmation {
  status: 'pending' | ApprovalStatus;
  error?: string;
  settledAt?: number;
}

export interface ApprovalRequest {
  kind: ApprovalKind;
  /** One sentence for the owner: what will happen when approved. */
  summary: string;
  hosts?: string[];
  insecure?: string[];
  /** Run when the owner approves; a throw settles the approval as `failed`. Omitted: a grant to redeem(). */
  apply?: () => unknown;
  /** What a grant is for (a gateway key's name): redeem() must name the same. */
  subject?: string;
}

interface Held {
  file: ApprovalFile;
  apply?: () => unknown;
  subject?: string;
  /** A grant's secret, as SHA-256: redeem() needs the secret itself, which only the asking caller got. */
  grantDigest?: string;
  timer: NodeJS.Timeout;
}

interface Grant {
  kind: ApprovalKind;
  subject?: string;
  grantDigest: string;
  expiresAt: number;
}

function digest(s: string): string {
  return crypto.createHash('sha256').update(s).digest('hex');
}

export interface ApprovalEvents {
  /** A new approval waits for the owner (hosts show it: the desktop dialog, the terminal prompt). */
  requested: [OwnerConfirmation];
  /** An approval ended: approved (and applied), denied, expired, or failed while applying. */
  settled: [ApprovalView];
}

function newCode(): string {
  const bytes = crypto.randomBytes(8);
  let s = '';
  for (const b of bytes) s += CODE_ALPHABET[b % CODE_ALPHABET.length];
  return `${s.slice(0, 4)}-${s.slice(4)}`;
}

/** "abcd efgh", "ABCDEFGH" and "ABCD-EFGH" name the same code. */
export function normalizeCode(code: string): string {
  const s = code.toUpperCase().replace(/[^A-Z0-9]/g, '');
  return s.length === 8 ? `${s.slice(0, 4)}-${s.slice(4)}` : s;
}

export interface OwnerApprovalsOptions {
  home: string;
  log: Logger;
  ttlMs?: number;
  now?: () => number;
  /** The command the owner runs (default `swan-provider`). */
  command?: string;
}

export class OwnerApprovals extends EventEmitter<ApprovalEvents> {
  private readonly held = new Map<string, Held>();
  private readonly grants = new Map<string, Grant>();
  private readonly dir: string;
  private readonly ttlMs: number;
  private readonly now: () => number;
  private poller?: NodeJS.Timeout;
  private closed = false;

  constructor(private readonly o: OwnerApprovalsOptions) {
    super();
    this.dir = path.join(o.home, APPROVALS_DIR);
    this.ttlMs = o.ttlMs ?? APPROVAL_TTL_MS;
    this.now = o.now ?? Date.now;
    // Approvals die with the agent: what an earlier run left is stale.
    fs.rmSync(this.dir, { recursive: true, force: true });
  }

  /** Holds a change for the owner; returns what the refusal carries. */
  request(r: ApprovalRequest): OwnerConfirmation {
    if (this.closed) throw new Error('the agent is stopping');
    for (const h of this.held.values()) if (h.file.kind === r.kind) this.settle(h, 'expired', 'replaced by a newer request');
    const code = newCode();
    const approvalId = crypto.randomBytes(12).toString('hex');
    const home = path.resolve(this.o.home) === path.resolve(defaultHome()) ? '' : ` --home ${JSON.stringify(this.o.home)}`;
    const view: OwnerConfirmation = {
      approvalId,
      code,
      kind: r.kind,
      summary: r.summary,
      hosts: r.hosts ?? [],
      insecure: r.insecure ?? [],
      approveCommand: `${this.o.command ?? 'swan-provider'} approve ${code}${home}`,
      expiresAt: this.now() + this.ttlMs,
    };
    const timer = setTimeout(() => {
      const h = this.held.get(approvalId);
      if (h) this.settle(h, 'expired', `not approved within ${Math.round(this.ttlMs / 60_000)} minutes`);
    }, this.ttlMs);
    timer.unref();
    // A grant (no change to apply: a credential the next call makes) is bound to the caller that asked by a
    // secret in its refusal alone: the `approval` event every console socket hears carries only the id.
    const grant = r.apply ? undefined : crypto.randomBytes(24).toString('base64url');
    const held: Held = {
      file: { ...view, status: 'pending' },
      timer,
      ...(r.apply ? { apply: r.apply } : {}),
      ...(r.subject !== undefined ? { subject: r.subject } : {}),
      ...(grant ? { grantDigest: digest(grant) } : {}),
    };
    this.held.set(approvalId, held);
    this.writeFile(held.file);
    this.startPolling();
    this.o.log.warn(
      `waiting for the owner's approval (${code}): ${r.summary} Approve with \`${view.approveCommand}\`${this.listenerCount('requested') ? ' or where this agent asks' : ''}; it expires in ${Math.round(this.ttlMs / 60_000)} minutes.`,
    );
    this.emit('requested', view);
    return grant ? { ...view, grant } : view;
  }

  /** Approvals waiting for the owner. */
  pending(): OwnerConfirmation[] {
    return [...this.held.values()].map((h) => {
      const { status: _s, error: _e, settledAt: _t, ...view } = h.file;
      return view;
    });
  }

  /**
   * The owner's decision, by code (what people type) or approval id (what a dialog holds). `by` says
   * through which channel, for the log. Resolves with the outcome, or undefined when nothing pending
   * has that code.
   */
  async decide(codeOrId: string, decision: 'approve' | 'deny', by: string): Promise<ApprovalView | undefined> {
    const want = normalizeCode(codeOrId);
    const h = this.held.get(codeOrId) ?? [...this.held.values()].find((x) => x.file.code === want);
    if (!h) return undefined;
    this.held.delete(h.file.approvalId);
    clearTimeout(h.timer);
    if (decision === 'deny') return this.settle(h, 'denied', `denied by the owner (${by})`);
    this.o.log.info(`approved by the owner (${by}): ${h.file.summary}`);
    if (!h.apply) {
      if (h.grantDigest)
        this.grants.set(h.file.approvalId, {
          kind: h.file.kind,
          ...(h.subject !== undefined ? { subject: h.subject } : {}),
          grantDigest: h.grantDigest,
          expiresAt: this.now() + this.ttlMs,
        });
      return this.settle(h, 'approved');
    }
    try {
      await h.apply();
    } catch (e) {
      return this.settle(h, 'failed', (e as Error).message);
    }
    return this.settle(h, 'approved');
  }

  /**
   * Uses up an approved grant of this kind and subject (true), or says there is none (false). `grant` is the
   * secret the asking caller's refusal carried: the approval's id, which every console socket hears, is not enough.
   */
  redeem(grant: string, kind: ApprovalKind, subject?: string): boolean {
    const want = Buffer.from(digest(grant));
    for (const [id, g] of this.grants) {
      if (!crypto.timingSafeEqual(Buffer.from(g.grantDigest), want)) continue;
      if (g.kind !== kind || g.subject !== subject) return false;
      this.grants.delete(id);
      return g.expiresAt > this.now();
    }
    return false;
  }

  close(): void {
    this.closed = true;
    for (const h of [...this.held.values()]) this.settle(h, 'expired', 'the agent stopped');
    this.grants.clear();
    this.stopPolling();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }

  private settle(h: Held, status: ApprovalStatus, why?: string): ApprovalView {
    this.held.delete(h.file.approvalId);
    clearTimeout(h.timer);
    const settledAt = this.now();
    h.file = { ...h.file, status, settledAt, ...(status === 'failed' && why ? { error: why } : {}) };
    this.writeFile(h.file);
    if (this.held.size === 0) this.stopPollingSoon();
    const view: ApprovalView = { approvalId: h.file.approvalId, kind: h.file.kind, status, ...(status === 'failed' && why ? { error: why } : {}) };
    if (status === 'approved') this.o.log.info(`approval ${h.file.code} done: ${h.file.summary}`);
    else if (status === 'failed') this.o.log.warn(`approval ${h.file.code} was given, but the change failed: ${why}`);
    else this.o.log.info(`approval ${h.file.code} ${status}${why ? ` (${why})` : ''}: nothing was changed`);
    this.emit('settled', view);
    return view;
  }

  private writeFile(f: ApprovalFile): void {
    try {
      fs.mkdirSync(this.dir, { recursive: true, mode: DIR_MODE });
      writeJsonAtomic(path.join(this.dir, `${f.approvalId}.json`), f);
    } catch (e) {
      this.o.log.warn(`could not write the approval file (swan-provider approve will not see it): ${(e as Error).message}`);
    }
  }

  private startPolling(): void {
    if (this.poller) return;
    this.poller = setInterval(() => this.poll(), POLL_MS);
    this.poller.unref();
  }

  private stopPolling(): void {
    clearInterval(this.poller);
    this.poller = undefined;
  }

  /** Settled files stay a while for the CLI to read, then go with the poller's last pass. */
  private stopPollingSoon(): void {
    if (!this.poller) return;
    const t = setTimeout(() => {
      if (this.held.size === 0) {
        this.poll();
        this.stopPolling();
      }
    }, KEEP_SETTLED_MS);
    t.unref();
  }

  /** Reads decisions (`<id>.decision`: "approve" or "deny") and clears settled files older than KEEP_SETTLED_MS. */
  private poll(): void {
    let names: string[];
    try {
      names = fs.readdirSync(this.dir);
    } catch {
      return;
    }
    for (const n of names) {
      const full = path.join(this.dir, n);
      if (n.endsWith('.decision')) {
        const id = n.slice(0, -'.decision'.length);
        let text = '';
        try {
          text = fs.readFileSync(full, 'utf8').trim();
        } catch {
          continue;
        }
        fs.rmSync(full, { force: true });
        if ((text === 'approve' || text === 'deny') && this.held.has(id)) void this.decide(id, text, 'swan-provider approve');
      } else if (n.endsWith('.json')) {
        const id = n.slice(0, -'.json'.length);
        if (this.held.has(id)) continue;
        try {
          if (this.now() - fs.statSync(full).mtimeMs > KEEP_SETTLED_MS) fs.rmSync(full, { force: true });
        } catch {
          /* gone already */
        }
      }
    }
  }
}
