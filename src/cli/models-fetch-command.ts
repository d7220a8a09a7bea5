// `swan-provider models recommend|catalog|download`: what this GPU should serve, the Swan model repository's
// catalogue, and a model fetched verified into the models folder (docs/models.md). The network's API is the
// home's ServiceURL (console settings, else config.toml, else mainnet's), or --service-url.
import fs from 'node:fs';
import { SettingsFile } from '../core/config/settings-file';
import { loadConfig } from '../core/config/config';
import { homePath } from '../core/config/home-layout';
import { terminalWriter } from '../core/base/terminal';
import { detectGpus } from '../core/gpu/detect';
import { GIB, gib } from '../core/fit/estimate';
import { recommend, type Recommendation } from '../core/fit/recommend';
import { fetchCatalog } from '../core/downloads/repository';
import { downloadModel, type ModelProgress } from '../core/downloads/model-download';
import { modelsDirOf } from '../core/downloads/models-dir';
import { huggingFaceFiles } from '../core/downloads/huggingface';
import { onDiskState } from '../core/fit/recommend';
import { NETWORKS } from '../shared/networks';

interface Common {
  home: string;
  serviceUrl?: string;
  modelsDir?: string;
}

/** The network API this home uses: --service-url, the console's setting, config.toml, else mainnet's. */
export function homeServiceUrl(o: Common): string {
  if (o.serviceUrl) return o.serviceUrl;
  const fromSettings = SettingsFile.in(o.home).get().serviceUrl;
  if (fromSettings) return fromSettings;
  const config = homePath(o.home, 'config');
  if (fs.existsSync(config)) {
    try {
      return loadConfig(config).serviceUrl;
    } catch {
      // doctor reports a bad config; the catalogue is still readable from mainnet.
    }
  }
  return NETWORKS.mainnet.serviceUrl;
}

function bytes(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(1)} GB`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)} MB`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(0)} kB`;
  return `${n} B`;
}

function table(head: string[], rows: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ');
  return [line(head), ...rows.map(line)].join('\n');
}

/** A row as `--json` prints it: the fit in the field `fit`, the estimate and every demand field beside it. */
export function recommendationJson(r: Recommendation): Record<string, unknown> {
  return {
    model_id: r.modelId,
    name: r.name,
    category: r.category,
    fit: r.fit.fit,
    ...(r.fit.code ? { fit_code: r.fit.code } : {}),
    ...(r.fit.reason ? { fit_reason: r.fit.reason } : {}),
    ...(r.fit.basis ? { fit_basis: r.fit.basis } : {}),
    ...(r.fit.needBytes !== undefined ? { need_bytes: r.fit.needBytes } : {}),
    ...(r.fit.budgetBytes !== undefined ? { budget_bytes: r.fit.budgetBytes } : {}),
    ...(r.earnHereDaily !== undefined ? { earn_here_daily_usd: r.earnHereDaily } : {}),
    on_disk: r.onDisk,
    in_repository: r.inRepository,
    size_bytes: r.sizeBytes,
    plan: { context_length: r.plan.contextLength, slots: r.plan.slots },
    estimate: r.estimate.known
      ? {
          weights_bytes: r.estimate.weightsBytes,
          kv_cache_bytes: r.estimate.kvBytes,
          overhead_bytes: r.estimate.overheadBytes,
          total_bytes: r.estimate.totalBytes,
          weights_from: r.estimate.weightsFrom,
          exact: r.estimate.exact,
          notes: r.estimate.notes,
        }
      : { unknown: r.estimate.code, reason: r.estimate.reason },
    ...(r.demand ? { demand: r.demand } : {}),
  };
}

async function gpuBudget(vramGb: number | undefined): Promise<{ budget: number | undefined; said: string }> {
  if (vramGb !== undefined) return { budget: vramGb * GIB, said: `planning for ${vramGb} GiB of GPU memory (--vram-gb)` };
  const inv = await detectGpus({ timeoutMs: 5000 });
  const total = inv.gpus.reduce((s, g) => s + g.vramTotalMb, 0);
  if (!total) return { budget: undefined, said: `no GPU reported its memory${inv.note ? ` (${inv.note})` : ''}` };
  return { budget: total * 1024 * 1024, said: `${inv.gpus.length} GPU(s), ${gib(total * 1024 * 1024)} in all: ${inv.gpus.map((g) => g.model).join(', ')}` };
}

export async function recommendCommand(o: Common & { json: boolean; vramGb?: number; slots?: number; context?: number }, io = stdio()): Promise<number> {
  const serviceUrl = homeServiceUrl(o);
  const { budget, said } = await gpuBudget(o.vramGb);
  const { rows, notes } = await recommend({
    serviceUrl,
    modelsDir: modelsDirOf(o.home, process.env, o.modelsDir),
    budgetBytes: budget,
    ...(o.slots ? { slots: o.slots } : {}),
    ...(o.context ? { contextLength: o.context } : {}),
  });
  if (o.json) {
    io.out.write(
      `${JSON.stringify({ service_url: serviceUrl, gpu: said, budget_bytes: budget ?? null, notes, models: rows.map(recommendationJson) }, null, 2)}\n`,
    );
    return rows.length ? 0 : 1;
  }
  io.err.write(`${said}\n`);
  for (const n of notes) io.err.write(`note: ${n}\n`);
  if (!rows.length) {
    io.err.write(`The network listed no models at ${serviceUrl}. Check the address (--service-url) and the connection.\n`);
    return 1;
  }
  io.out.write(
    `${table(
      ['MODEL', 'FIT', 'NEEDS', 'EARN/DAY HERE', 'REQ 24H', 'TREND', 'PROVIDERS', 'ON DISK', 'WHY'],
      rows.map((r) => [
        r.modelId,
        r.fit.fit,
        r.fit.needBytes !== undefined
          ? `${gib(r.fit.needBytes)}${r.fit.basis === 'network' ? ' (network)' : r.estimate.known && r.estimate.exact ? '' : ' (est.)'}`
          : '?',
        r.earnHereDaily !== undefined ? `$${r.earnHereDaily.toFixed(2)}` : '?',
        r.demand?.requests24h !== undefined ? String(r.demand.requests24h) : '-',
        r.demand?.demandTrend ?? '-',
        r.demand?.onlineProviders !== undefined ? String(r.demand.onlineProviders) : '-',
        r.onDisk,
        r.fit.fit === 'unknown' ? (r.fit.reason ?? '') : r.estimate.known ? `${r.plan.contextLength} tokens × ${r.plan.slots} slot(s)` : '',
      ]),
    )}\n`,
  );
  const best = rows.find((r) => r.fit.fit === 'fits' && r.inRepository && r.onDisk === 'none');
  if (best) io.err.write(`\nNext: swan-provider models download ${best.modelId}\n`);
  return 0;
}

export async function catalogCommand(o: Common & { json: boolean }, io = stdio()): Promise<number> {
  const serviceUrl = homeServiceUrl(o);
  const modelsDir = modelsDirOf(o.home, process.env, o.modelsDir);
  const { models, skipped } = await fetchCatalog(serviceUrl);
  const rows = models.map((m) => ({ ...m, onDisk: onDiskState(modelsDir, m.modelId) }));
  if (o.json) {
    io.out.write(
      `${JSON.stringify(
        rows.map((m) => ({
          model_id: m.modelId,
          name: m.name,
          category: m.category,
          file_count: m.fileCount,
          total_size_bytes: m.totalSizeBytes,
          ...(m.weightSourceUrl ? { weight_source_url: m.weightSourceUrl } : {}),
          on_disk: m.onDisk,
        })),
        null,
        2,
      )}\n`,
    );
  } else {
    io.out.write(
      `${table(
        ['MODEL', 'NAME', 'CATEGORY', 'FILES', 'SIZE', 'ON DISK'],
        rows.map((m) => [m.modelId, m.name, m.category, String(m.fileCount), bytes(m.totalSizeBytes), m.onDisk]),
      )}\n`,
    );
    if (skipped) io.err.write(`note: ${skipped} malformed catalogue entr${skipped === 1 ? 'y was' : 'ies were'} skipped\n`);
    io.err.write(`Models folder: ${modelsDir}\n`);
  }
  return 0;
}

function clock(s: number | null): string {
  if (s === null || !Number.isFinite(s)) return '--:--';
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = Math.floor(s % 60);
  return `${h ? `${h}:` : ''}${String(m).padStart(h ? 2 : 1, '0')}:${String(sec).padStart(2, '0')}`;
}

/** One progress line: file, bytes, percent, rate, time left. */
export function progressLine(p: ModelProgress): string {
  const pct = p.totalBytes ? Math.floor((p.doneBytes / p.totalBytes) * 100) : 0;
  return `${p.file ?? p.modelId} [${p.fileIndex + 1}/${p.fileCount}]  ${bytes(p.doneBytes)} / ${bytes(p.totalBytes)}  ${pct}%  ${bytes(p.rateBytesPerSec)}/s  ${clock(p.etaSeconds)} left`;
}

export async function downloadCommand(
  o: Common & { modelId: string; json: boolean; hf?: string; include?: string[]; revision?: string },
  io = stdio(),
  signal?: AbortSignal,
): Promise<number> {
  const serviceUrl = homeServiceUrl(o);
  const modelsDir = modelsDirOf(o.home, process.env, o.modelsDir);
  const ctl = new AbortController();
  signal?.addEventListener('abort', () => ctl.abort(), { once: true });
  const onSignal = (): void => ctl.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const tty = io.tty === true;
  let last = 0;
  try {
    // From the Hugging Face Hub (--hf): its file list, the same verified download into the folder of <id>.
    const files = o.hf
      ? await huggingFaceFiles({
          repo: o.hf,
          ...(o.include ? { include: o.include } : {}),
          ...(o.revision ? { revision: o.revision } : {}),
          ...(process.env.HF_ENDPOINT ? { hubUrl: process.env.HF_ENDPOINT } : {}),
          ...(process.env.HF_TOKEN ? { accessToken: process.env.HF_TOKEN } : {}),
        })
      : undefined;
    io.err.write(`Downloading ${o.modelId} from ${o.hf ? `Hugging Face ${o.hf}` : serviceUrl} into ${modelsDir}\n`);
    const r = await downloadModel({
      ...(files ? { files } : {}),
      serviceUrl,
      modelsDir,
      modelId: o.modelId,
      signal: ctl.signal,
      onProgress: (p) => {
        if (p.phase !== 'downloading') return;
        const now = Date.now();
        // A live line on a terminal; a line every 2 s in a log.
        if (tty) io.err.write(`\r${progressLine(p)}\u001b[K`);
        else if (now - last >= 2000) {
          last = now;
          io.err.write(`${progressLine(p)}\n`);
        }
      },
    });
    if (tty) io.err.write('\n');
    const summary = {
      model_id: r.modelId,
      state: r.state,
      dir: r.dir,
      composite_hash: r.manifest.composite_hash,
      files: r.files.map((f) => ({
        filename: f.filename,
        sha256: f.hash,
        size_bytes: f.size_bytes,
        verified: f.verified,
        resumed_bytes: f.resumedBytes,
        skipped: f.skipped,
      })),
      seconds: Math.round(r.seconds * 10) / 10,
    };
    if (o.json) io.out.write(`${JSON.stringify(summary, null, 2)}\n`);
    else {
      io.out.write(
        `${r.state === 'verified' ? 'verified' : 'hashed'}: ${r.modelId} (${r.files.length} file(s), ${bytes(r.files.reduce((s, f) => s + f.size_bytes, 0))}) in ${r.dir}\n`,
      );
      io.out.write(`composite sha256 ${r.manifest.composite_hash}\n`);
      if (r.state === 'hashed') io.out.write('Some files had no published hash: they were hashed here but not checked against the network.\n');
    }
    return 0;
  } catch (e) {
    if (tty) io.err.write('\n');
    const code = (e as { code?: string }).code;
    io.err.write(`error${code ? ` [${code}]` : ''}: ${(e as Error).message}\n`);
    return code === 'cancelled' ? 130 : 1;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

export interface Io {
  out: { write(s: string): boolean };
  err: { write(s: string): boolean };
  /** Whether the error stream is a terminal (a live progress line) or a log (a line every 2 s). */
  tty?: boolean;
}

function stdio(): Io {
  // Model ids and names come from the network: printed through forTerminal.
  return { out: terminalWriter(process.stdout), err: terminalWriter(process.stderr), tty: process.stderr.isTTY === true };
}
