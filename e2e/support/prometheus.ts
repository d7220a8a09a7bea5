// A real Prometheus server (Debian's `prometheus` package) for the fleet spec: its own config and a temp
// storage folder, a free loopback port, scraping each rig's fleet API metrics with that rig's read-only
// fleet token (a file per rig, as docs/monitoring.md shows), once a second.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

export const PROMETHEUS_BIN = process.env.PROMETHEUS_BIN ?? '/usr/bin/prometheus';

export interface ScrapeTarget {
  /** The rig's name: its job is swan-provider-<name>. */
  name: string;
  port: number;
  token: string;
}

export interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

export class Prometheus {
  private output = '';
  private constructor(
    readonly url: string,
    private readonly child: ChildProcess,
  ) {
    child.stdout?.on('data', (d: Buffer) => (this.output += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (this.output += d.toString()));
  }

  /** Why Prometheus cannot run here, or undefined when it can. */
  static missing(): string | undefined {
    return fs.existsSync(PROMETHEUS_BIN) ? undefined : `${PROMETHEUS_BIN} is not installed (Debian package prometheus)`;
  }

  static async start(dir: string, targets: ScrapeTarget[]): Promise<Prometheus> {
    fs.mkdirSync(path.join(dir, 'data'), { recursive: true });
    const jobs = targets.map((t) => {
      const tokenFile = path.join(dir, `${t.name}.token`);
      fs.writeFileSync(tokenFile, t.token, { mode: 0o600 });
      return [
        `  - job_name: swan-provider-${t.name}`,
        '    metrics_path: /api/fleet/v1/metrics',
        '    authorization:',
        '      type: Bearer',
        `      credentials_file: ${tokenFile}`,
        '    static_configs:',
        `      - targets: ["127.0.0.1:${t.port}"]`,
      ].join('\n');
    });
    const config = path.join(dir, 'prometheus.yml');
    fs.writeFileSync(
      config,
      ['global:', '  scrape_interval: 1s', '  scrape_timeout: 1s', '  evaluation_interval: 1s', 'scrape_configs:', ...jobs, ''].join('\n'),
    );
    const port = await freePort();
    const child = spawn(
      PROMETHEUS_BIN,
      [
        `--config.file=${config}`,
        `--storage.tsdb.path=${path.join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--log.level=warn',
        '--storage.tsdb.retention.time=1h',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const p = new Prometheus(`http://127.0.0.1:${port}`, child);
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`prometheus exited (${child.exitCode}):\n${p.output}`);
      const ok = await fetch(`${p.url}/-/ready`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) return p;
      if (Date.now() > deadline) {
        await p.close();
        throw new Error(`prometheus was not ready within 30 s:\n${p.output}`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  /** An instant query; rejects with Prometheus' own error for a query it refuses. */
  async query(expr: string, time?: number): Promise<Sample[]> {
    const q = new URLSearchParams({ query: expr, ...(time !== undefined ? { time: String(time / 1000) } : {}) });
    const res = await fetch(`${this.url}/api/v1/query?${q}`);
    const body = (await res.json()) as { status: string; error?: string; data?: { resultType: string; result: Sample[] } };
    if (body.status !== 'success') throw new Error(`prometheus refused ${expr}: ${body.error}`);
    return body.data!.resultType === 'vector' ? body.data!.result : [];
  }

  /** The single value of a query that sums to one series (NaN when it has none). */
  async value(expr: string, time?: number): Promise<number> {
    const r = await this.query(expr, time);
    return r.length === 1 ? Number(r[0]!.value[1]) : NaN;
  }

  /** What each scrape target's health is now. */
  async targets(): Promise<Array<{ job: string; health: string; lastError: string }>> {
    const res = await fetch(`${this.url}/api/v1/targets`);
    const body = (await res.json()) as { data: { activeTargets: Array<{ labels: { job: string }; health: string; lastError: string }> } };
    return body.data.activeTargets.map((t) => ({ job: t.labels.job, health: t.health, lastError: t.lastError }));
  }

  logs(): string {
    return this.output;
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((r) => this.child.once('exit', () => r()));
    this.child.kill('SIGTERM');
    const killer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(killer);
  }
}
