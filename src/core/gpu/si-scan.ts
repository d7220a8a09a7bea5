// The generic GPU scan (systeminformation's graphics controllers), run in a short-lived child process.
//
// Why a child and not an import: systeminformation is only needed on machines without a vendor tool
// (Apple Silicon, Intel, cards whose driver tools are missing), yet loading it costs the resident agent
// about 10 MB for as long as it runs. In a child it is loaded, asked once
// and gone. And a deadline can really be kept: on Linux and Windows systeminformation calls nvidia-smi
// synchronously with no timeout, which in-process would freeze the agent; a child is killed with its
// process group (runTool).
import { createRequire } from 'node:module';
import os from 'node:os';
import type { Logger } from '../base/log';
import { mapSiControllers, type SiMapResult } from './si-map';
import { runTool, toolMessage } from './run-tool';
import { seconds } from './tool-notes';

/**
 * Run by the child (`node -e`, CommonJS): loads systeminformation from the path given as its argument and
 * prints the controller list as one JSON value. Nothing else is written to stdout.
 */
const CHILD_SCRIPT = `
const si = require(process.argv[1]);
si.graphics().then(
  (d) => process.stdout.write(JSON.stringify(d && d.controllers !== undefined ? d.controllers : null)),
  (e) => { process.stderr.write(String((e && e.message) || e)); process.exitCode = 1; },
);`;

/** Where systeminformation is installed (resolved from this module, so the child loads the same copy). */
function systemInformationPath(): string {
  return createRequire(import.meta.url).resolve('systeminformation');
}

/**
 * systeminformation's controllers mapped to GPUs, or none with a remark saying why. Never rejects.
 * `env` is the child's environment (its PATH decides which tools systeminformation finds). A scan that
 * fails is logged, not remarked on: it is a fallback, and "no GPU found" already says what to do.
 */
export async function scanWithSystemInformation(env: NodeJS.ProcessEnv, timeoutMs: number, log?: Logger): Promise<SiMapResult> {
  let modulePath: string;
  try {
    modulePath = systemInformationPath();
  } catch (err) {
    log?.warn(`systeminformation is not installed: ${String(err)}`);
    return { gpus: [], remarks: [] };
  }
  // ELECTRON_RUN_AS_NODE: in the desktop app process.execPath is Electron, which this makes a plain Node.
  const res = await runTool(process.execPath, ['-e', CHILD_SCRIPT, modulePath], {
    env: { ...env, ELECTRON_RUN_AS_NODE: '1' },
    timeoutMs,
    maxBytes: 1024 * 1024,
  });
  if (res.timedOut) return { gpus: [], remarks: [`The generic GPU scan did not finish within ${seconds(timeoutMs)}.`] };
  if (!res.ok) {
    log?.warn(`systeminformation failed: ${toolMessage(res) || `exit code ${res.code}, signal ${res.signal}`}`);
    return { gpus: [], remarks: [] };
  }
  let controllers: unknown;
  try {
    controllers = JSON.parse(res.stdout);
  } catch {
    log?.warn(`systeminformation printed something that is not JSON: ${res.stdout.slice(0, 200)}`);
    return { gpus: [], remarks: [] };
  }
  return mapSiControllers(controllers, os.totalmem() / 1048576);
}
