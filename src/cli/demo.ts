// `swan-provider demo`: everything on one machine — the dev hub, a clearly labelled simulated engine
// (for machines with no engine), the agent, and the browser console — plus a little traffic.
import path from 'node:path';
import { Agent } from '../core/agent';
import { startConsoleServer } from '../core/console/server';
import { fleetApiRoute } from '../core/console/fleet-api';
import { AgentLog } from '../core/base/log';
import { startDevHub } from './dev-hub';
import { ensureConsoleUi } from './console-ui';
import { parseHostPort, rendererDir } from './home';
import { consoleFix, firstListenProblem } from './port-check';
import { startSimulatedEngine } from './sim-engine';
import { homePath } from '../core/config/home-layout';
import { writeFileAtomic, writeJsonAtomic } from '../core/config/atomic-file';
import { ensureHome } from '../core/config/home';

const DEMO_KEY = 'sk-prov-demo-0000000000';

export async function demoCommand(o: { home: string; console: string }): Promise<number> {
  let at: { host: string; port: number };
  try {
    at = parseHostPort(o.console, '--console');
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n`);
    return 2;
  }
  const busy = await firstListenProblem([{ what: 'console', ...at, fix: consoleFix(at.host) }]);
  if (busy) {
    process.stderr.write(`${busy}\n`);
    return 2;
  }
  const why = await ensureConsoleUi((line) => process.stdout.write(`${line}\n`));
  if (why) process.stderr.write(`${why}\n`);
  const home = path.join(o.home, 'demo');
  // Its own files are made private from the start (0700 / 0600), so the agent has nothing to tighten.
  ensureHome(home);
  const log = new AgentLog({ file: homePath(home, 'log'), console: 'info' });
  // Simulated network, simulated money: the demo's hub pays at its own rates, so earning shows.
  const hub = await startDevHub({ token: DEMO_KEY, earningsEnabled: true, log: (l) => log.child('dev-hub').info(l) });
  const engine = await startSimulatedEngine({ host: '127.0.0.1' });
  const configPath = homePath(home, 'config');
  writeFileAtomic(
    configPath,
    `[API]\nNodeName = "demo-provider"\n[Inference]\nWebSocketURL = "${hub.wsUrl}"\nServiceURL = "${hub.url}"\nApiKey = "${DEMO_KEY}"\n[Agent]\nDiscovery = false\nHealthCheckIntervalSeconds = 5\n`,
  );
  writeJsonAtomic(homePath(home, 'models'), Object.fromEntries(engine.models.map((id) => [id, { endpoint: engine.url }])));
  const agent = await Agent.create({ home, configPath, log, mode: 'headless', discovery: false, metrics: true });
  agent.settings.update((s) => ({ ...s, onboarded: true }));
  await agent.start();
  const { host, port } = at;
  const con = await startConsoleServer({
    backend: agent,
    host,
    port,
    staticDir: rendererDir,
    log: log.child('console'),
    metrics: () => agent.metrics!.text(),
    routes: [fleetApiRoute({ source: agent.fleet.api, tokens: agent.fleet.tokens, log: log.child('fleet') })],
  });
  process.stdout.write(`\nDemo running. The engine is SIMULATED (every answer starts with "[simulated]").\n`);
  process.stdout.write(`console: ${con.url}\n`);
  process.stdout.write(
    `dev hub: ${hub.url}   (curl ${hub.url}/v1/chat/completions -d '{"model":"${engine.models[0]}","messages":[{"role":"user","content":"hi"}],"stream":true}')\n`,
  );
  // A trickle of traffic so the dashboard has something to show.
  const traffic = setInterval(() => {
    const model = engine.models[Math.floor(Math.random() * engine.models.length)];
    void fetch(`${hub.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: 'Tell me about GPUs.' }], max_tokens: 64 }),
    })
      .then((r) => r.text())
      .catch(() => undefined);
  }, 4000);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  clearInterval(traffic);
  await con.close();
  await agent.stop();
  await engine.close();
  await hub.close();
  return 0;
}
