// The GPU's power limit, read and (with the owner's consent) set through nvidia-smi: `-pl` is the driver's own
// cap, which holds the card under it whatever runs (a quieter, cooler card at some speed). It needs
// administrator rights on most systems and lasts until the next reboot; when it cannot be set, the reason comes
// from nvidia-smi's documented exit codes (2 invalid argument, 3 not supported, 4 no permission), not its prose.
import { CodedError } from '../../shared/bridge-error';
import { CSV_FORMAT } from './nvidia-parse';
import { findOnPath, runTool, type ToolResult } from './run-tool';

export interface PowerLimits {
  index: number;
  /** The limit the driver enforces now, and the card's default, min and max (W); null where the card does not say. */
  limitW: number | null;
  defaultW: number | null;
  minW: number | null;
  maxW: number | null;
}

/**
 * no_tool: no nvidia-smi; not_supported: this card or driver cannot change it; needs_admin: only an
 * administrator may; out_of_range: outside what the card allows; no_gpu: no such GPU; tool_failed: anything else.
 */
export type PowerLimitErrorCode = 'no_tool' | 'not_supported' | 'needs_admin' | 'out_of_range' | 'no_gpu' | 'tool_failed';

export class PowerLimitError extends CodedError<PowerLimitErrorCode> {
  override name = 'PowerLimitError';
}

const FIELDS = ['index', 'power.limit', 'power.default_limit', 'power.min_limit', 'power.max_limit'];
const TIMEOUT_MS = 10_000;

function watts(cell: string | undefined): number | null {
  const n = Number((cell ?? '').trim());
  return cell !== undefined && /^\s*\d+(\.\d+)?\s*$/.test(cell) && Number.isFinite(n) ? n : null;
}

/** Each NVIDIA GPU's power limits; [] without nvidia-smi. */
export async function readPowerLimits(env: NodeJS.ProcessEnv): Promise<PowerLimits[]> {
  const file = findOnPath('nvidia-smi', env);
  if (!file) return [];
  const res = await runTool(file, [`--query-gpu=${FIELDS.join(',')}`, CSV_FORMAT], { env, timeoutMs: TIMEOUT_MS, maxBytes: 64 * 1024 });
  if (!res.ok) throw new PowerLimitError('tool_failed', `nvidia-smi could not read the power limits: ${toolText(res)}`);
  return res.stdout
    .split('\n')
    .map((l) => l.split(','))
    .filter((c) => c.length === FIELDS.length && /^\s*\d+\s*$/.test(c[0]!))
    .slice(0, 64)
    .map((c) => ({ index: Number(c[0]), limitW: watts(c[1]), defaultW: watts(c[2]), minW: watts(c[3]), maxW: watts(c[4]) }));
}

/** Sets GPU `index`'s power limit to `w` watts; answers the limits after it. Throws a PowerLimitError saying why not. */
export async function setPowerLimit(index: number, w: number, env: NodeJS.ProcessEnv): Promise<PowerLimits> {
  const file = findOnPath('nvidia-smi', env);
  if (!file) throw new PowerLimitError('no_tool', 'nvidia-smi was not found, so the power limit cannot be set from here.');
  const before = (await readPowerLimits(env)).find((g) => g.index === index);
  if (!before) throw new PowerLimitError('no_gpu', `There is no NVIDIA GPU ${index} on this machine.`);
  if (before.minW === null || before.maxW === null)
    throw new PowerLimitError('not_supported', `GPU ${index} does not let its power limit be changed (its driver reports no range).`);
  if (!(w >= before.minW && w <= before.maxW))
    throw new PowerLimitError('out_of_range', `GPU ${index} takes a power limit from ${before.minW} W to ${before.maxW} W; ${w} W is outside it.`);
  const res = await runTool(file, ['-i', String(index), '-pl', String(w)], { env, timeoutMs: TIMEOUT_MS, maxBytes: 64 * 1024 });
  if (!res.ok) {
    const text = toolText(res);
    if (res.code === 4)
      throw new PowerLimitError(
        'needs_admin',
        `nvidia-smi needs administrator rights to change the power limit (${text}). Run "sudo nvidia-smi -i ${index} -pl ${w}" yourself; it lasts until the next reboot.`,
      );
    if (res.code === 3) throw new PowerLimitError('not_supported', `GPU ${index} does not let its power limit be changed: ${text}`);
    if (res.code === 2) throw new PowerLimitError('out_of_range', `nvidia-smi refused ${w} W for GPU ${index}: ${text}`);
    throw new PowerLimitError('tool_failed', `nvidia-smi could not set the power limit: ${text}`);
  }
  // Set: a read-back that fails or misses the GPU does not undo that; the limit asked for is what the driver took.
  const after = (await readPowerLimits(env).catch(() => [])).find((g) => g.index === index);
  return after ?? { ...before, limitW: w };
}

/** The tool's own words, one line, bounded (what it printed is shown, never interpreted beyond its exit code). */
function toolText(res: ToolResult): string {
  if (res.timedOut) return 'it did not answer in time';
  if (res.spawnError) return res.spawnError;
  const line = `${res.stderr}\n${res.stdout}`
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l && !/^All done\.?$/i.test(l));
  return (line ?? `exit code ${res.code ?? 'none'}`).replace(/[\u0000-\u001f\u007f]/g, ' ').slice(0, 200);
}
