// What the disk fault suites share: the agent's CLI run as a child in a home on the disk under test
// (test/support/cli/agent-child.ts), a home configured to serve one model from a test engine through a recording hub, and that engine and hub
// started once per suite.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { RecordingHub } from '../recording-hub';
import { startTestEngine, type TestEngine } from '../engine-server';
import { TEST_KEY } from '../stack';
import { writeConfigToml } from '../config-toml';

export { killAgents, startAgent, type AgentChild } from '../cli/agent-child';

export interface ServingRig {
  engine: TestEngine;
  hub: RecordingHub;
  /** Writes `home`'s models.json (the model on the engine) and config.toml (the hub, a key, fast health checks). */
  configure(home: string): string;
}

/** A test engine serving `model` and a recording hub, started before the suite's tests and closed after them. */
export function servingRig(model: string): ServingRig {
  const rig = { model } as ServingRig & { model: string };
  rig.configure = (home) => {
    fs.writeFileSync(path.join(home, 'models.json'), JSON.stringify({ [model]: { endpoint: rig.engine.url } }));
    return writeConfigToml(home, {
      Inference: { Enable: true, WebSocketURL: rig.hub.wsUrl, ServiceURL: 'http://127.0.0.1:9', ApiKey: TEST_KEY },
      Agent: { Discovery: false, HealthCheckIntervalSeconds: 0.2 },
    });
  };
  beforeAll(async () => {
    rig.engine = await startTestEngine({ models: [model], mode: { generate: 50, delayMs: 2 }, promptTokens: 9 });
    rig.hub = await RecordingHub.start();
  });
  afterAll(async () => {
    await rig.hub?.close();
    await rig.engine?.close();
  });
  return rig;
}
