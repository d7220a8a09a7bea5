// Metrics from a tool that has no streaming mode (amd-smi, rocm-smi), or nvidia-smi in
// 'spawn' mode: one process per sample, each with a deadline, never two at once.
import type { GpuDeviceSample } from '../../shared/types';
import type { Logger } from '../base/log';
import { parseAmdMetric, parseRocmMetric, parseToolJson } from './amd-parse';
import { parseSampleLine, queryArgs, SAMPLE_FIELDS } from './nvidia-parse';
import { runTool, toolMessage } from './run-tool';
import { backoffDelay, type Backoff, type SampleSource, type SourceEvents } from './sample-source';

export interface PollReader {
  name: string;
  file: string;
  args: string[];
  parse(stdout: string): GpuDeviceSample[];
}

export function nvidiaPollReader(file: string): PollReader {
  return {
    name: 'nvidia-smi',
    file,
    args: queryArgs(SAMPLE_FIELDS),
    parse: (out) => out.split(/\r?\n/).flatMap((l) => parseSampleLine(l) ?? []),
  };
}

export function amdSmiReader(file: string): PollReader {
  return { name: 'amd-smi', file, args: ['metric', '-u', '-p', '-t', '-m', '--json'], parse: (out) => parseAmdMetric(parseToolJson(out)) };
}

export function rocmSmiReader(file: string): PollReader {
  return {
    name: 'rocm-smi',
    file,
    args: ['--showuse', '--showmeminfo', 'vram', '--showtemp', '--showpower', '--showmaxpower', '--showfan', '--json'],
    parse: (out) => parseRocmMetric(parseToolJson(out)),
  };
}

export interface PollOptions {
  /** In order of preference; a reader that fails (not a timeout) hands over to the next one. */
  readers: PollReader[];
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  backoff: Backoff;
  log?: Logger;
}

export class ToolPollSource implements SampleSource {
  private current = 0;
  private inFlight: Promise<void> | null = null;
  private nextAttemptAt = 0;
  private attempts = 0;
  private stopped = false;

  constructor(
    private readonly opts: PollOptions,
    private readonly events: SourceEvents,
  ) {}

  get name(): string {
    const r = this.opts.readers[this.current];
    return r ? (r.name === 'nvidia-smi' ? 'nvidia-smi (spawn per sample)' : r.name) : 'none';
  }

  start(): void {
    this.stopped = false;
    this.tick(Date.now());
  }

  tick(now: number): void {
    if (this.stopped || this.inFlight || now < this.nextAttemptAt) return;
    this.inFlight = this.poll().finally(() => {
      this.inFlight = null;
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.inFlight;
  }

  private async poll(): Promise<void> {
    const reader = this.opts.readers[this.current];
    if (!reader) return;
    const res = await runTool(reader.file, reader.args, { env: this.opts.env, timeoutMs: this.opts.timeoutMs });
    if (this.stopped) return;
    let reason: string;
    if (res.ok) {
      try {
        const devices = reader.parse(res.stdout);
        if (devices.length) {
          this.attempts = 0;
          this.nextAttemptAt = 0;
          this.events.frame(devices);
          return;
        }
        reason = `${reader.name} reported no GPU.`;
      } catch (err) {
        reason = `${reader.name} output could not be read (${(err as Error).message}).`;
      }
    } else if (res.timedOut) {
      reason = `${reader.name} did not answer within ${(this.opts.timeoutMs / 1000).toFixed(1)} s.`;
    } else {
      reason = `${reader.name} failed: ${toolMessage(res) || `exit code ${res.code}`}.`;
      if (this.current + 1 < this.opts.readers.length) {
        this.current += 1;
        this.opts.log?.warn(`${reason} Switching to ${this.opts.readers[this.current]?.name}.`);
        this.events.down(reason);
        return; // the next reader gets its chance at the next tick
      }
    }
    this.attempts += 1;
    const delay = backoffDelay(this.opts.backoff, this.attempts);
    this.nextAttemptAt = Date.now() + delay;
    if (this.attempts === 1) this.opts.log?.warn(`${reason} Next try in ${delay} ms.`);
    else this.opts.log?.debug(`${reason} Next try in ${delay} ms (attempt ${this.attempts}).`);
    this.events.down(reason);
  }
}
