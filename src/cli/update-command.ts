// `swan-provider update --check [--json]` and `swan-provider update [--json]`: the release channel
// (decision 0010) from a terminal. --check asks which version is newest (exit 0: this is the newest, 100: a
// newer one is available, 1: the check failed). Without it the newer release's npm tarball is downloaded,
// checked against the release's SHA256SUMS and kept in <home>/updates (0600); nothing is installed: the exact
// command that installs it is printed. With an agent running on this home, the update is held until that
// agent says no request is in flight (its answer in console-links/, up to --wait seconds; exit 3 when requests
// were still in flight then, or when it did not answer).
import path from 'node:path';
import type { UpdateCheckView, UpdateDownloadView } from '../shared/views/settings';
import { forTerminal } from '../core/base/terminal';
import { memoryLog } from '../core/base/log';
import { processAlive } from '../core/base/process-alive';
import { APP_VERSION } from '../core/base/version';
import { homePath } from '../core/config/home-layout';
import { readHolder } from '../core/config/home-lock';
import { SettingsFile } from '../core/config/settings-file';
import { feedUrlProblem } from '../core/update/check';
import { fmtTime } from '../shared/dates';
import { askIdle } from './console-link';
import { Updates } from '../core/update/updates';
import { trustedReleaseKeys, type TrustedKey } from '../core/update/signing';
import { ConfigError, loadConfig } from '../core/config/config';
import fs from 'node:fs';

export interface UpdateCommandOptions {
  home: string;
  check?: boolean;
  json?: boolean;
  /** Another release channel base (else the feed saved in the console's settings, else the default). */
  feed?: string;
  /** Seconds to wait for the running agent's last request to finish (default 600). */
  wait?: string | number;
  /** The running version (tests). */
  current?: string;
  stdout?: NodeJS.WritableStream;
  stderr?: NodeJS.WritableStream;
}

/** Exit codes: 0 newest / ready, 1 failed, 2 a bad argument, 3 held (requests still in flight), 100 a newer version is available (--check). */
export const UPDATE_EXIT = { ok: 0, failed: 1, usage: 2, held: 3, available: 100 } as const;

export interface UpdateReport {
  code: NonNullable<UpdateCheckView['code']> | NonNullable<UpdateDownloadView['code']>;
  current: string;
  latest?: string;
  feed: string;
  check: UpdateCheckView;
  download?: UpdateDownloadView;
  /** An agent runs on this home; `idleAt`: when it said no request was in flight, `heldFor`: how many were when asked. */
  agentRunning?: { pid: number; console?: string; idleAt?: number; heldFor?: number | null };
  /** What to do next, in words. */
  next: string;
  exit: number;
}

function runningAgent(home: string): UpdateReport['agentRunning'] {
  const h = readHolder(home);
  if (!h || !processAlive(h.pid)) return undefined;
  return { pid: h.pid, ...(h.console ? { console: h.console } : {}) };
}

export async function updateCommand(o: UpdateCommandOptions): Promise<number> {
  const out = o.stdout ?? process.stdout;
  const err = o.stderr ?? process.stderr;
  const feed = (o.feed ?? SettingsFile.in(o.home).get().updateFeedUrl ?? '').trim();
  const problem = feedUrlProblem(feed);
  if (problem) {
    err.write(`${problem}\n`);
    return UPDATE_EXIT.usage;
  }
  const waitS = o.wait === undefined ? 600 : Number(o.wait);
  if (!Number.isFinite(waitS) || waitS < 0 || waitS > 86_400) {
    err.write('--wait takes seconds from 0 to 86400\n');
    return UPDATE_EXIT.usage;
  }
  // The release keys this home trusts ([Agent] ReleaseSigningKeys): a config that cannot be read is not skipped,
  // since that would drop the signature check it asks for.
  let keys: TrustedKey[];
  const configPath = homePath(o.home, 'config');
  try {
    keys = trustedReleaseKeys(fs.existsSync(configPath) ? loadConfig(configPath, process.env).agent.releaseSigningKeys : []);
  } catch (e) {
    err.write(`The config could not be read, so its release keys are unknown: ${e instanceof ConfigError ? e.message : (e as Error).message}\n`);
    return UPDATE_EXIT.usage;
  }
  const current = o.current ?? APP_VERSION;
  const agent = runningAgent(o.home);
  // This process serves no request: in-flight requests are the running agent's, said below.
  const updates = new Updates({
    dir: homePath(o.home, 'updates'),
    mode: 'headless',
    current,
    feed: () => feed,
    inFlight: () => 0,
    drained: () => Promise.resolve(),
    log: memoryLog().child('update'),
    keys,
  });
  const check = await updates.check();
  const base = { current, ...(check.latest ? { latest: check.latest } : {}), feed: check.feed, check, ...(agent ? { agentRunning: agent } : {}) };
  let report: UpdateReport;
  if (check.error) {
    report = {
      ...base,
      code: 'update_check_failed',
      next: 'Nothing was downloaded. Check the network and the update feed (Settings → About, or --feed), then try again.',
      exit: UPDATE_EXIT.failed,
    };
  } else if (!check.available) {
    report = { ...base, code: 'update_up_to_date', next: `${current} is the newest release on the channel; nothing to do.`, exit: UPDATE_EXIT.ok };
  } else if (o.check) {
    const file = check.release?.asset
      ? `${check.release.asset.name}, ${check.release.checksums ? 'listed in SHA256SUMS' : 'but the release has no SHA256SUMS to verify it'}`
      : undefined;
    report = {
      ...base,
      code: 'update_available',
      next: `Run \`swan-provider update\` to download ${file ?? 'it'} and check it; nothing is installed for you.`,
      exit: UPDATE_EXIT.available,
    };
  } else {
    let d: UpdateDownloadView;
    try {
      updates.startDownload();
      d = await updates.whenReady();
    } catch (e) {
      d = { state: 'error', code: 'update_download_failed', version: check.latest ?? '', installOnQuit: false, error: (e as Error).message };
    }
    updates.close();
    if (d.state !== 'ready') {
      report = {
        ...base,
        code: d.code ?? 'update_download_failed',
        download: d,
        next: d.error ?? 'The download failed; try again later.',
        exit: UPDATE_EXIT.failed,
      };
    } else {
      const install = `${d.command}, then start the agent again (swan-provider run, or systemctl --user restart for the service)`;
      if (!agent) {
        report = { ...base, code: 'update_ready', download: d, next: `Nothing was installed. To install it: ${install}.`, exit: UPDATE_EXIT.ok };
      } else {
        // Never mid-request: held until the agent of this home says its last request has finished.
        if (!o.json)
          out.write(
            `${forTerminal(`Version ${d.version} is verified; holding it until the agent (pid ${agent.pid}) has no request in flight (up to ${waitS} s)…`)}\n`,
          );
        const idle = await askIdle(o.home, waitS * 1000);
        if (idle) {
          const at = Date.now();
          const agentRunning = { ...agent, idleAt: at, heldFor: idle.heldFor };
          const waited = idle.heldFor ? ` (it waited for ${idle.heldFor} request${idle.heldFor === 1 ? '' : 's'} to finish)` : '';
          report = {
            ...base,
            agentRunning,
            code: 'update_ready',
            download: { ...d },
            next: `No request was in flight at ${fmtTime(at)}${waited}. Nothing was installed. Stop the agent now (new requests may start), then: ${install}.`,
            exit: UPDATE_EXIT.ok,
          };
        } else {
          report = {
            ...base,
            code: 'update_held_requests_in_flight',
            download: { ...d, state: 'held', code: 'update_held_requests_in_flight' },
            next: `The agent (pid ${agent.pid}) did not say within ${waitS} s that no request is in flight. The verified file stays in ${path.dirname(d.file ?? '')}; run \`swan-provider update\` again later, or open its console's Settings → About, which holds the update until the last request has finished.`,
            exit: UPDATE_EXIT.held,
          };
        }
      }
    }
  }
  if (o.json) {
    out.write(`${JSON.stringify(report, null, 2)}\n`);
    return report.exit;
  }
  const lines = [
    `current: ${current}`,
    `latest:  ${check.latest ?? 'unknown'}${check.release ? ` (release ${check.release.tag})` : ''}`,
    `channel: ${check.feed}`,
    `code:    ${report.code}`,
  ];
  if (check.error) lines.push(check.error);
  const d = report.download;
  if (d?.sha256) {
    lines.push(`file:    ${d.file}`, `sha256:  ${d.sha256} (matches the release's SHA256SUMS)`);
    lines.push(
      d.signature === 'verified'
        ? `signed:  SHA256SUMS is signed by release key ${d.signedBy}`
        : 'signed:  not checked (no release key is set: [Agent] ReleaseSigningKeys)',
    );
  } else if (d?.error) lines.push(d.error);
  if (report.agentRunning) lines.push(`agent:   running on this home (pid ${report.agentRunning.pid})`);
  lines.push(report.next);
  out.write(`${lines.map((l) => forTerminal(l)).join('\n')}\n`);
  return report.exit;
}
