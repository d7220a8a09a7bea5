// A fresh agent home for the bench: config.toml and models.json pointing at the dev hub and the bench
// engine. Timings are the defaults users get (heartbeat 54 s, health checks 30 s, GPU sampling 1 Hz);
// only discovery is off (the bench names its engine) and the per-endpoint limit is raised to 64 so 64
// streams run at once instead of queueing behind the default of 4.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const BENCH_KEY = 'sk-prov-bench-0000000000';
export const AGENT_NAME = 'bench-agent';

export function writeAgentHome(hubWsUrl: string, hubUrl: string, engineUrl: string, nodeName = AGENT_NAME): string {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-bench-'));
  fs.writeFileSync(path.join(home, 'models.json'), JSON.stringify({ bench: { endpoint: `${engineUrl}/v1` } }, null, 2));
  fs.writeFileSync(
    path.join(home, 'config.toml'),
    [
      '[API]',
      `NodeName = "${nodeName}"`,
      '[Inference]',
      `WebSocketURL = "${hubWsUrl}"`,
      `ServiceURL = "${hubUrl}"`,
      `ApiKey = "${BENCH_KEY}"`,
      '[Agent]',
      'Discovery = false',
      'MaxConcurrentPerEndpoint = 64',
      'MaxQueuePerModel = 64',
      'GpuSampleIntervalSeconds = 1',
      '',
    ].join('\n'),
  );
  return home;
}
