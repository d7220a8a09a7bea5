// The UI's render cost with 10,000 requests and 1-hour charts, in Debian's Chromium, from the
// renderer's own performance metrics (CDP Performance.getMetrics: script, layout, style, task time and
// JS heap). The real renderer (built fresh from src into a private folder, served by the real console
// server) is fed by a stand-in `window.swan` — the same approach as e2e/scale.spec.ts — holding either
// 10,000 requests and 60 minutes of 1 Hz samples for 2 GPUs, or nothing (the baseline, same page, same
// live pushes, empty store). Each phase is measured in both and reported as a ratio.
// Run: npx tsx bench/ui-render.ts  (also called by `npm run bench` through bench/helpers.ts)
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type CDPSession, type Page } from 'playwright-core';
import { startConsoleServer } from '../src/core/console/server';
import { ROOT } from './child';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
const REQUESTS = 10_000;
const HISTORY_SECONDS = 3600;
const GPUS = 2;
const LIVE_DASHBOARD_MS = 10_000;
const LIVE_REQUESTS_MS = 5_000;
const STEP_TIMEOUT_MS = 15_000;

/**
 * The stand-in bridge, as an init script. Live pushes follow the agent's real cadence: one batch every
 * 250 ms (the event batcher's interval) with the updates and text of 4 concurrent streams at 40 tok/s
 * (each lasts 3 s, then finishes and a new one starts), plus a GPU sample and a snapshot every second.
 */
function bridgeScript(requests: number, historySeconds: number): string {
  return `(() => {
  const N = ${requests}, H = ${historySeconds}, GPUS = ${GPUS};
  const now = Date.now();
  const models = ['llama-3.1-8b-instruct', 'qwen2.5-7b-instruct', 'mistral-7b-instruct'];
  const request = (i, status, startedAt) => ({
    id: 'req-' + String(i).padStart(6, '0'), source: i % 5 === 0 ? 'local' : 'hub', model: models[i % models.length],
    status, stream: true, startedAt, firstTokenAt: startedAt + 150,
    ...(status === 'running' ? {} : { finishedAt: startedAt + 2150, latencyMs: 2150 }),
    tokensIn: 20 + (i % 30), tokensOut: 100 + (i % 50), estimated: false,
  });
  const requests = Array.from({ length: N }, (_, i) => request(i, i % 17 === 0 ? 'error' : 'ok', now - (N - i) * 1000));
  const device = (index, t) => ({ index, utilization: 0.5 + 0.45 * Math.sin(t / 30000 + index), vramUsedMb: 6000 + 2000 * Math.sin(t / 60000 + index),
    vramTotalMb: 12288, temperatureC: 60 + 10 * Math.sin(t / 45000), powerW: 180 + 80 * Math.sin(t / 20000 + index), powerLimitW: 320, fanPercent: 55 });
  const sample = (t) => ({ ts: t, available: true, devices: Array.from({ length: GPUS }, (_, g) => device(g, t)), cpuPercent: 20 + 10 * Math.sin(t / 10000), ramUsedMb: 9000, ramTotalMb: 32768 });
  const history = Array.from({ length: H }, (_, i) => sample(now - (H - i) * 1000));
  const gpu = (index) => ({ index, vendor: 'nvidia', model: 'NVIDIA GeForce RTX 3080 Ti', slug: 'rtx3080ti', vramTotalMb: 12288, sharedMemory: false, source: 'nvidia-smi' });
  const model = (id) => ({ id, enabled: true, health: 'healthy', endpoints: [], inFlight: 0, queued: 0, maxConcurrent: 4, maxQueue: 32 });
  let today = { requests: N, errors: 0, tokensIn: 0, tokensOut: 0, earnings: 0 };
  const snapshot = () => ({
    version: '0.1.0', nodeId: 'bench', nodeName: 'ui-bench',
    link: { state: 'connected', hubUrl: 'ws://hub.invalid/ws', since: now, attempts: 0 }, pause: { paused: false },
    gpu: { gpus: Array.from({ length: GPUS }, (_, g) => gpu(g)), detectedAt: now }, engines: [], models: models.map(model),
    today, gateway: { enabled: false, listen: '127.0.0.1:18080', running: false, keys: 0 }, hasKey: true, onboarded: true,
    verdict: { state: 'serving', tone: 'ok', label: 'Serving', headline: 'Serving: the network routes requests to every model.', reasons: [], routable: models },
  });
  const settings = { hubUrl: 'ws://hub.invalid', serviceUrl: 'http://hub.invalid', nodeName: 'ui-bench', keySet: true, keyStorage: 'config',
    gatewayEnabled: false, gatewayListen: '127.0.0.1:18080', startAtLogin: false, closeToTray: true, theme: 'light',
    autoPauseOnGpuBusy: false, pauseSchedule: [], retentionDays: 365 };
  const answers = {
    'snapshot.get': () => snapshot(), 'settings.get': () => settings, 'requests.list': () => requests, 'gpu.history': () => history,
    'requests.text': () => '', 'gpu.processes': () => [], 'logs.list': () => [], 'prices.list': () => ({ earningsEnabled: false, prices: [] }),
    'gateway.keys.list': () => [],
  };
  const listeners = new Set();
  window.swan = {
    transport: 'ipc',
    async invoke(channel) {
      const a = answers[channel];
      if (!a) throw new Error(channel + ' is not part of the UI bench');
      return a();
    },
    onEvents(cb) { listeners.add(cb); return () => listeners.delete(cb); },
  };
  let next = N, tick = 0, timer = 0, longTasks = [];
  const streams = [];
  const emit = (events) => { for (const l of listeners) l(events); };
  const batch = () => {
    const t = Date.now();
    const events = [];
    while (streams.length < 4) streams.push({ r: request(next++, 'running', t), left: 12 });
    for (const s of streams) {
      s.left--;
      s.r = { ...s.r, tokensOut: s.r.tokensOut + 10 };
      if (s.left <= 0) s.r = { ...s.r, status: 'ok', finishedAt: t, latencyMs: t - s.r.startedAt };
      events.push({ type: 'request.update', request: s.r }, { type: 'request.text', id: s.r.id, delta: 'token '.repeat(10) });
    }
    for (let k = streams.length - 1; k >= 0; k--) if (streams[k].left <= 0) { streams.splice(k, 1); today = { ...today, requests: today.requests + 1 }; }
    if (tick++ % 4 === 0) events.push({ type: 'gpu.sample', sample: sample(t) }, { type: 'snapshot', snapshot: snapshot() });
    emit(events);
  };
  let observer;
  window.__swanBench = {
    startLive() {
      longTasks = [];
      try { observer = new PerformanceObserver((l) => { for (const e of l.getEntries()) longTasks.push(e.duration); }); observer.observe({ type: 'longtask' }); } catch {}
      batch();
      timer = setInterval(batch, 250);
    },
    stopLive() {
      clearInterval(timer);
      observer?.disconnect();
      return { batches: tick, longTasks: longTasks.length, longTaskMs: longTasks.reduce((a, b) => a + b, 0) };
    },
  };
})();`;
}

/** Wheel-scrolls the Requests list 120 px a frame for 150 frames and times each frame (as e2e/scale.spec.ts). */
const SCROLL_AND_MEASURE = `(async () => {
  const el = document.querySelector('[data-testid=request-scroll]');
  const frames = [];
  let last = performance.now();
  for (let i = 0; i < 150; i++) {
    if (el) el.scrollTop += i < 75 ? 120 : -120;
    await new Promise((r) => requestAnimationFrame(r));
    const t = performance.now();
    frames.push(t - last);
    last = t;
  }
  frames.sort((a, b) => a - b);
  return { p50: frames[75], p95: frames[Math.floor(frames.length * 0.95)], rows: document.querySelectorAll('[data-testid=request-row]').length };
})()`;

/** Resolves after the next two animation frames: what a state change caused has been painted. */
const PAINTED = 'new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(null))))';

interface PhaseCost {
  wallMs: number;
  /** TaskDuration in thread time: everything the renderer's main thread did (CPU, not wall). */
  cpuMs: number;
  scriptMs: number;
  layoutMs: number;
  styleMs: number;
  /** JS heap in use after the phase, after a forced GC. */
  heapMb: number;
}

type Metrics = Record<string, number>;

async function metrics(cdp: CDPSession): Promise<Metrics> {
  const { metrics: list } = await cdp.send('Performance.getMetrics');
  return Object.fromEntries(list.map((m) => [m.name, m.value]));
}

async function measure<T>(cdp: CDPSession, run: () => Promise<T>): Promise<{ cost: PhaseCost; value: T }> {
  const before = await metrics(cdp);
  const t0 = performance.now();
  const value = await run();
  const wallMs = performance.now() - t0;
  const after = await metrics(cdp);
  await cdp.send('HeapProfiler.collectGarbage');
  const heap = (await metrics(cdp)).JSHeapUsedSize ?? 0;
  const d = (k: string) => ((after[k] ?? 0) - (before[k] ?? 0)) * 1000;
  return {
    cost: {
      wallMs,
      cpuMs: d('TaskDuration'),
      scriptMs: d('ScriptDuration'),
      layoutMs: d('LayoutDuration'),
      styleMs: d('RecalcStyleDuration'),
      heapMb: heap / 2 ** 20,
    },
    value,
  };
}

interface Frames {
  p50: number;
  p95: number;
  rows: number;
}

interface LiveStats {
  batches: number;
  longTasks: number;
  longTaskMs: number;
}

interface VariantResult {
  phases: Record<'load' | 'scroll' | 'liveRequests' | 'dashboard' | 'window60' | 'liveDashboard', PhaseCost>;
  frames: Frames;
  liveDashboard: LiveStats;
  /** Points drawn per chart with the 60-minute window (after downsampling). */
  pointsDrawn: number;
  pageErrors: string[];
}

const visible = (page: Page, selector: string) => page.locator(selector).first().waitFor({ state: 'visible', timeout: STEP_TIMEOUT_MS });

async function runVariant(browser: Browser, url: string, requests: number, historySeconds: number): Promise<VariantResult> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: 'light', locale: 'en-US', timezoneId: 'UTC' });
  try {
    const page = await context.newPage();
    const pageErrors: string[] = [];
    page.on('pageerror', (e) => pageErrors.push(e.message));
    await page.addInitScript({ content: bridgeScript(requests, historySeconds) });
    // A first page on the same origin, so the renderer process (and its counters) stays the same.
    const origin = new URL(url).origin;
    await page.goto(`${origin}/favicon.ico`);
    const cdp = await context.newCDPSession(page);
    await cdp.send('Performance.enable', { timeDomain: 'threadTicks' });

    const count = `${requests.toLocaleString('en-US')} of ${requests.toLocaleString('en-US')} requests`;
    const load = await measure(cdp, async () => {
      await page.goto(`${url}#/requests`);
      await visible(page, '[data-app-state="loaded"]');
      await page.getByTestId('request-count').filter({ hasText: count }).waitFor({ timeout: STEP_TIMEOUT_MS });
      if (requests > 0) await visible(page, '[data-testid=request-row]');
      await page.evaluate(PAINTED);
    });
    const scroll = await measure(cdp, () => page.evaluate<Frames>(SCROLL_AND_MEASURE));
    const liveRequests = await measure(cdp, async () => {
      await page.evaluate('window.__swanBench.startLive()');
      await page.waitForTimeout(LIVE_REQUESTS_MS); // the phase is this much time of live pushes
      return page.evaluate<LiveStats>('window.__swanBench.stopLive()');
    });
    const dashboard = await measure(cdp, async () => {
      await page.getByTestId('nav-dashboard').click();
      await visible(page, `[data-testid=chart-util-${GPUS - 1}]`);
      await visible(page, '[data-testid=chart-ram]');
      await page.evaluate(PAINTED);
    });
    const window60 = await measure(cdp, async () => {
      await page.getByTestId('window-60').click();
      await visible(page, '[data-testid=window-60][aria-pressed=true]');
      await page.evaluate(PAINTED);
      return Number(await page.getByTestId('chart-util-0').getAttribute('data-points'));
    });
    const liveDashboard = await measure(cdp, async () => {
      await page.evaluate('window.__swanBench.startLive()');
      await page.waitForTimeout(LIVE_DASHBOARD_MS);
      return page.evaluate<LiveStats>('window.__swanBench.stopLive()');
    });
    await cdp.detach();
    return {
      phases: {
        load: load.cost,
        scroll: scroll.cost,
        liveRequests: liveRequests.cost,
        dashboard: dashboard.cost,
        window60: window60.cost,
        liveDashboard: liveDashboard.cost,
      },
      frames: scroll.value,
      liveDashboard: liveDashboard.value,
      pointsDrawn: window60.value,
      pageErrors,
    };
  } finally {
    await context.close();
  }
}

/** Builds the current renderer into a private folder (no race with an e2e run using out/renderer). */
function buildRenderer(): { dir: string; note: string; cleanup: () => void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-ui-bench-'));
  const r = spawnSync(
    process.execPath,
    [
      path.join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js'),
      'build',
      '--config',
      'vite.renderer.config.ts',
      '--outDir',
      dir,
      '--emptyOutDir',
      '--logLevel',
      'error',
    ],
    {
      cwd: ROOT,
      encoding: 'utf8',
    },
  );
  const cleanup = () => fs.rmSync(dir, { recursive: true, force: true });
  if (r.status === 0 && fs.existsSync(path.join(dir, 'index.html'))) return { dir, note: 'built from src for this run', cleanup };
  cleanup();
  const fallback = path.join(ROOT, 'out', 'renderer');
  if (fs.existsSync(path.join(fallback, 'index.html')))
    return {
      dir: fallback,
      note: `build failed, measured out/renderer as it was: ${(r.stderr || r.stdout || '').trim().split('\n')[0]}`,
      cleanup: () => undefined,
    };
  throw new Error(`could not build the renderer (npx vite build --config vite.renderer.config.ts): ${(r.stderr || r.stdout || '').trim()}`);
}

const r1 = (n: number) => Math.round(n * 10) / 10;
const ratio = (a: number, b: number) => (b > 0 ? Math.round((a / b) * 100) / 100 : 'n/a');

export async function benchUiRender(): Promise<Record<string, number | string>> {
  const built = buildRenderer();
  const server = await startConsoleServer({
    backend: { invoke: () => Promise.reject(new Error('the UI bench uses the stand-in bridge')), subscribe: () => () => undefined },
    port: 0,
    staticDir: built.dir,
  });
  let browser: Browser | undefined;
  try {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
    // Each one-time link opens one browser session (console auth): a new link per variant.
    const base = await runVariant(browser, server.newUrl(), 0, 0);
    const full = await runVariant(browser, server.newUrl(), REQUESTS, HISTORY_SECONDS);
    const out: Record<string, number | string> = {
      chromium: browser.version(),
      renderer: built.note,
      store: `${REQUESTS} requests, ${HISTORY_SECONDS} points per series, ${GPUS} GPUs; baseline: same page, empty store, same live pushes`,
      live: 'one batch per 250 ms: 4 streams at 40 tok/s, GPU sample and snapshot at 1 Hz',
    };
    for (const [name, f] of Object.entries(full.phases)) {
      const b = base.phases[name as keyof VariantResult['phases']];
      out[`${name}.cpuMs`] = r1(f.cpuMs);
      out[`${name}.cpuMsBaseline`] = r1(b.cpuMs);
      out[`${name}.cpuRatio`] = ratio(f.cpuMs, b.cpuMs);
      out[`${name}.scriptMs`] = r1(f.scriptMs);
      out[`${name}.layoutMs`] = r1(f.layoutMs);
      out[`${name}.styleMs`] = r1(f.styleMs);
      out[`${name}.wallMs`] = Math.round(f.wallMs);
      out[`${name}.heapMb`] = r1(f.heapMb);
      out[`${name}.heapMbBaseline`] = r1(b.heapMb);
      out[`${name}.heapRatio`] = ratio(f.heapMb, b.heapMb);
    }
    out['liveDashboard.cpuPercentOfCore'] = r1((full.phases.liveDashboard.cpuMs / LIVE_DASHBOARD_MS) * 100);
    out['liveDashboard.cpuPercentOfCoreBaseline'] = r1((base.phases.liveDashboard.cpuMs / LIVE_DASHBOARD_MS) * 100);
    out['liveDashboard.longTasks'] = full.liveDashboard.longTasks;
    out['liveDashboard.longTaskMs'] = Math.round(full.liveDashboard.longTaskMs);
    out['liveDashboard.longTasksBaseline'] = base.liveDashboard.longTasks;
    out['liveDashboard.longTaskMsBaseline'] = Math.round(base.liveDashboard.longTaskMs);
    out['window60.pointsDrawnPerChart'] = full.pointsDrawn;
    out['scroll.frameP50Ms'] = r1(full.frames.p50);
    out['scroll.frameP95Ms'] = r1(full.frames.p95);
    out['scroll.frameP50MsBaseline'] = r1(base.frames.p50);
    out['scroll.frameP95MsBaseline'] = r1(base.frames.p95);
    out['scroll.frameP95Ratio'] = ratio(full.frames.p95, base.frames.p95);
    out['scroll.rowsInDom'] = full.frames.rows;
    const errors = [...base.pageErrors, ...full.pageErrors];
    out.pageErrors = errors.length === 0 ? 'none' : errors.slice(0, 3).join(' | ');
    return out;
  } finally {
    await browser?.close();
    await server.close();
    built.cleanup();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const t0 = performance.now();
  benchUiRender().then(
    (figures) => {
      const width = Math.max(...Object.keys(figures).map((k) => k.length));
      for (const [k, v] of Object.entries(figures)) process.stdout.write(`${k.padEnd(width)}  ${v}\n`);
      process.stdout.write(`(${((performance.now() - t0) / 1000).toFixed(1)} s)\n`);
    },
    (e: Error) => {
      process.stderr.write(`ui-render bench failed: ${e.stack ?? e.message}\n`);
      process.exit(1);
    },
  );
}
