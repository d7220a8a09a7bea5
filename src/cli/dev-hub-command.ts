// `swan-provider dev-hub`: the reference hub, for development and demos.
import { startDevHub, type DevHub } from './dev-hub';
import { fmtTime } from '../shared/dates';
import { explainListen, firstListenProblem, type ListenTarget } from './port-check';

export async function devHubCommand(o: {
  port: string;
  host: string;
  token?: string;
  pendingToken?: string;
  earnings?: boolean;
  repository?: string;
  repositoryRate?: string;
}): Promise<number> {
  const port = Number(o.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write(`--port "${o.port}" is not a port number (0-65535)\n`);
    return 2;
  }
  const rate = o.repositoryRate === undefined ? 0 : Number(o.repositoryRate);
  if (!Number.isInteger(rate) || rate < 0) {
    process.stderr.write(`--repository-rate "${o.repositoryRate}" is not a whole number of bytes a second\n`);
    return 2;
  }
  const target: ListenTarget = {
    what: 'dev hub',
    host: o.host,
    port,
    fix: (next) => `Start it on another port: swan-provider dev-hub --port ${next} (and point WebSocketURL and ServiceURL there).`,
  };
  const busy = await firstListenProblem([target]);
  if (busy) {
    process.stderr.write(`${busy}\n`);
    return 2;
  }
  let hub: DevHub;
  try {
    hub = await startDevHub({
      port,
      host: o.host,
      // Simulated money: a dev hub pays by default, so the console shows what earning looks like.
      earningsEnabled: o.earnings !== false,
      ...(o.token ? { token: o.token } : {}),
      ...(o.pendingToken ? { pendingToken: o.pendingToken } : {}),
      ...(o.repository !== undefined ? { repository: o.repository } : {}),
      ...(rate ? { repositoryRate: rate } : {}),
      log: (l) => process.stderr.write(`${fmtTime(Date.now())} ${l}\n`),
    });
  } catch (e) {
    // Taken between the check and the listen, or another refusal: still one line.
    const code = (e as NodeJS.ErrnoException).code;
    process.stderr.write(`${code ? explainListen(target, code) : `The dev hub could not start: ${(e as Error).message}`}\n`);
    return 2;
  }
  process.stdout.write(`dev hub listening on ${hub.url}\n`);
  process.stdout.write(`  simulated network, simulated money: earnings are ${o.earnings === false ? 'off (--no-earnings)' : 'on'}\n`);
  if (hub.repository) process.stdout.write(`  model repository: ${hub.repository.modelCount} model(s) from ${hub.repository.dir}\n`);
  process.stdout.write(`  providers connect to WebSocketURL = "${hub.wsUrl}"${o.token ? '' : ' (any provider key is accepted)'}\n`);
  process.stdout.write(
    `  a hub notice: curl -X POST ${hub.url}/dev/notice -d '{"event":"payout_pending","severity":"info","message":"A payout is pending."}'\n`,
  );
  process.stdout.write(
    `  try: curl ${hub.url}/v1/chat/completions -H 'content-type: application/json' -d '{"model":"<model>","messages":[{"role":"user","content":"hi"}]}'\n`,
  );
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await hub.close();
  return 0;
}
