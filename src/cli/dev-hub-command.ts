// `swan-provider dev-hub`: the reference hub, for development and demos.
import { startDevHub } from './dev-hub';
import { fmtTime } from '../shared/dates';

export async function devHubCommand(o: { port: string; host: string; token?: string; pendingToken?: string }): Promise<number> {
  const port = Number(o.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write(`--port "${o.port}" is not a port number (0-65535)\n`);
    return 2;
  }
  const hub = await startDevHub({ port, host: o.host, ...(o.token ? { token: o.token } : {}), ...(o.pendingToken ? { pendingToken: o.pendingToken } : {}), log: (l) => process.stderr.write(`${fmtTime(Date.now())} ${l}\n`) });
  process.stdout.write(`dev hub listening on ${hub.url}\n`);
  process.stdout.write(`  providers connect to WebSocketURL = "${hub.wsUrl}"${o.token ? '' : ' (any provider key is accepted)'}\n`);
  process.stdout.write(`  a hub notice: curl -X POST ${hub.url}/dev/notice -d '{"event":"payout_pending","severity":"info","message":"A payout is pending."}'\n`);
  process.stdout.write(`  try: curl ${hub.url}/v1/chat/completions -H 'content-type: application/json' -d '{"model":"<model>","messages":[{"role":"user","content":"hi"}]}'\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await hub.close();
  return 0;
}
