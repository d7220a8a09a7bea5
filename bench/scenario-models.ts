// BENCH_ONLY=models: what fetching and sizing models costs. Three figures, each beside its baseline in one run:
//   1. download throughput: `swan-provider models download` (sha256 computed as the bytes are written, the
//      manifest written last) against `curl -o` on the same 1 GiB file from the same local server (a stand-in
//      of the Swan model repository in this process, the file in the page cache), in alternating turns. Ours is
//      timed to "verified" (the command's own figure, from the file list to the manifest); curl's to
//      "downloaded". Targets: throughput ≥ 0.9× curl's, time to verified ≤ 1.1× curl's time to downloaded.
//      Beside them, in the same turns: the same job by standard tools (`curl | tee | sha256sum`), `sha256sum` alone,
//      and node:crypto's sha256 of the same file read from the page cache (the hash our download uses, alone).
//      Then the same over a 1 Gbit/s link (the server paced to 125 MB/s, a 256 MiB file), two turns each.
//   2. the relay's added p99 during a download: the 64-stream batched level while a `models download` child
//      runs (started again whenever one ends, so it spans the level) against the same level without, in
//      alternating turns, the forwarder's figure in the same levels as the noise band;
//   3. the fit estimate beside the real llama-server's own reported model + KV buffer sizes for both shared
//      GGUFs (skipped, with the reason, where ../shared/engines/llama.cpp is absent).
// Prints; writes nothing.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { estimateVram, MIB } from '../src/core/fit/estimate';
import { readGgufFacts } from '../src/core/fit/gguf-facts';
import { LLAMA_PRESENT, SMALL, TINY } from '../test/support/live/llama';
import { llamaBuffers } from '../test/support/live/llama-buffers';
import { throttle } from '../src/cli/dev-hub-repository';
import { ROOT } from './child';
import type { Rig } from './rig';
import { relayLevel, type RelayLevel } from './scenario-latency';
import type { BenchSettings } from './settings';
import { median, round } from './stats';

const GIB = 1024 ** 3;
const MODEL_ID = 'bench/Download-1GiB';
const FILE_NAME = 'model.safetensors';

/** A file of `bytes` that is not zeros, and its sha256, written once. */
function writeFile(file: string, bytes: number): string {
  const block = randomBytes(16 * 1024 * 1024);
  const h = createHash('sha256');
  const fd = fs.openSync(file, 'w');
  try {
    for (let done = 0, i = 0; done < bytes; done += block.length, i++) {
      block.writeUInt32LE(i, 0);
      const n = Math.min(block.length, bytes - done);
      fs.writeSync(fd, block, 0, n);
      h.update(block.subarray(0, n));
    }
  } finally {
    fs.closeSync(fd);
  }
  return h.digest('hex');
}

/** The repository stand-in: the file list wrapped in {data}, and the file itself (Range as RFC 9110 says), from disk. */
async function repository(file: string, sha: string, size: number, bytesPerSec = 0): Promise<{ url: string; close: () => Promise<void> }> {
  let base = '';
  const server = http.createServer((req, res) => {
    const p = (req.url ?? '/').split('?')[0];
    if (p === `/api/v1/models/${encodeURIComponent(MODEL_ID)}/files`) {
      const body = JSON.stringify({
        data: {
          model_id: MODEL_ID,
          files: [{ filename: FILE_NAME, hash: sha, algorithm: 'sha256', size_bytes: size, url: `${base}/files/${FILE_NAME}` }],
          total_size_bytes: size,
          file_count: 1,
        },
      });
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    }
    if (p === `/files/${FILE_NAME}`) {
      const m = /^bytes=(\d+)-$/.exec(String(req.headers.range ?? ''));
      const start = m ? Number(m[1]) : 0;
      res.writeHead(m ? 206 : 200, {
        'content-type': 'application/octet-stream',
        'content-length': size - start,
        ...(m ? { 'content-range': `bytes ${start}-${size - 1}/${size}` } : {}),
      });
      const body = fs.createReadStream(file, { start, highWaterMark: 1 << 20 });
      if (bytesPerSec > 0) body.pipe(throttle(bytesPerSec)).pipe(res);
      else body.pipe(res);
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url: base, close: () => new Promise((r) => server.close(() => r())) };
}

function run(cmd: string, args: string[]): Promise<{ ms: number; out: string; code: number | null }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const p = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr.resume();
    p.on('error', reject);
    p.on('exit', (code) => resolve({ ms: performance.now() - t0, out, code }));
  });
}

const cliArgs = (home: string, serviceUrl: string): string[] => [
  path.join(ROOT, 'bin', 'swan-provider.js'),
  'models',
  'download',
  MODEL_ID,
  '--json',
  '--home',
  home,
  '--service-url',
  serviceUrl,
];

/** One `models download` into a fresh home; its own seconds to "verified". */
async function ours(serviceUrl: string, scratch: string): Promise<number> {
  const home = fs.mkdtempSync(path.join(scratch, 'home-'));
  try {
    const r = await run(process.execPath, cliArgs(home, serviceUrl));
    if (r.code !== 0) throw new Error(`models download exited ${r.code}`);
    const j = JSON.parse(r.out) as { state: string; seconds: number };
    if (j.state !== 'verified') throw new Error(`models download said ${j.state}`);
    return j.seconds * 1000;
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
}

async function curl(serviceUrl: string, scratch: string): Promise<number> {
  const out = path.join(scratch, 'curl.bin');
  const r = await run('curl', ['-sS', '-o', out, `${serviceUrl}/files/${FILE_NAME}`]);
  fs.rmSync(out, { force: true });
  if (r.code !== 0) throw new Error(`curl exited ${r.code}`);
  return r.ms;
}

/**
 * The same job done by standard tools: `curl | tee file | sha256sum` (download, write and hash in one pass, the hash
 * on its own core), and `sha256sum` of the file from the page cache (coreutils' own SHA-256).
 */
async function curlAndHash(serviceUrl: string, scratch: string): Promise<number> {
  const out = path.join(scratch, 'curl-hash.bin');
  const r = await run('bash', ['-c', `set -o pipefail; curl -sS '${serviceUrl}/files/${FILE_NAME}' | tee '${out}' | sha256sum`]);
  fs.rmSync(out, { force: true });
  if (r.code !== 0) throw new Error(`curl | tee | sha256sum exited ${r.code}`);
  return r.ms;
}

/** node:crypto's sha256 (OpenSSL, the one the download uses) over the file from the page cache, in a child. */
async function nodeHash(file: string): Promise<number> {
  const code = `const c=require('crypto'),fs=require('fs');const h=c.createHash('sha256');const b=Buffer.alloc(8<<20);const fd=fs.openSync(${JSON.stringify(file)},'r');let n;while((n=fs.readSync(fd,b,0,b.length,null))>0)h.update(b.subarray(0,n));h.digest();`;
  const r = await run(process.execPath, ['-e', code]);
  if (r.code !== 0) throw new Error(`node sha256 exited ${r.code}`);
  return r.ms;
}

async function hashAlone(file: string): Promise<number> {
  const r = await run('sha256sum', [file]);
  if (r.code !== 0) throw new Error(`sha256sum exited ${r.code}`);
  return r.ms;
}

/** `models download` children one after another until stopped: a download spans the whole level. */
function downloadsRunning(serviceUrl: string, scratch: string): { stop: () => Promise<void> } {
  let stopped = false;
  let child: ChildProcess | undefined;
  const loop = (async () => {
    while (!stopped) {
      const home = fs.mkdtempSync(path.join(scratch, 'bg-'));
      child = spawn(process.execPath, cliArgs(home, serviceUrl), { stdio: 'ignore' });
      await new Promise((r) => child!.once('exit', r));
      fs.rmSync(home, { recursive: true, force: true });
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      child?.kill('SIGKILL');
      await loop;
    },
  };
}

export async function modelsBench(rig: Rig, s: BenchSettings, say: (line: string) => void): Promise<void> {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-bench-models-'));
  const size = s.quick ? GIB / 4 : GIB;
  const file = path.join(scratch, 'weights.bin');
  say(`models: writing a ${size / GIB} GiB file…`);
  const sha = writeFile(file, size);
  const repo = await repository(file, sha, size);
  try {
    // ---- 1. download throughput beside curl ----
    await curl(repo.url, scratch); // the file into the page cache
    const t: Record<'ours' | 'curl' | 'tools' | 'hash' | 'node', number[]> = { ours: [], curl: [], tools: [], hash: [], node: [] };
    const rounds = s.quick ? 2 : 3;
    const turn = {
      ours: () => ours(repo.url, scratch),
      curl: () => curl(repo.url, scratch),
      tools: () => curlAndHash(repo.url, scratch),
      hash: () => hashAlone(file),
      node: () => nodeHash(file),
    };
    for (let r = 0; r < rounds; r++) {
      const order = ['ours', 'curl', 'tools', 'hash', 'node'] as const;
      for (const who of r % 2 === 0 ? order : [...order].reverse()) t[who].push(await turn[who]());
    }
    const mbps = (ms: number): number => round(size / 1e6 / (ms / 1000), 0);
    const o = median(t.ours);
    const c = median(t.curl);
    say(
      `models: download of ${size / GIB} GiB from a local server: swan-provider ${mbps(o)} MB/s to verified (turns ${t.ours.map(mbps).join(', ')}), ` +
        `curl ${mbps(c)} MB/s to downloaded (turns ${t.curl.map(mbps).join(', ')}); throughput ${round(c / o, 2)}× curl's (target ≥ 0.9), ` +
        `time to verified ${round(o / c, 2)}× curl's time to downloaded (target ≤ 1.1)`,
    );
    const tools = median(t.tools);
    const hash = median(t.hash);
    say(
      `models: the same job by standard tools: curl | tee | sha256sum ${mbps(tools)} MB/s (turns ${t.tools.map(mbps).join(', ')}), swan-provider ${round(tools / o, 2)}× its throughput; ` +
        `sha256sum alone from the page cache ${mbps(hash)} MB/s (turns ${t.hash.map(mbps).join(', ')}); ` +
        `node:crypto's sha256 alone ${mbps(median(t.node))} MB/s (turns ${t.node.map(mbps).join(', ')}): swan-provider at ${round(median(t.node) / o, 2)}× the hash alone`,
    );

    // The same at the speed of a fast home link (1 Gbit/s, 125 MB/s): what an owner's download meets. A
    // loopback server is faster than any link, and there the one core that reads, hashes and writes is the limit.
    const linkSize = s.quick ? GIB / 16 : GIB / 4;
    const linkFile = path.join(scratch, 'link.bin');
    const linkRepo = await repository(linkFile, writeFile(linkFile, linkSize), linkSize, 125e6);
    try {
      const l: Record<'ours' | 'curl', number[]> = { ours: [], curl: [] };
      for (let r = 0; r < 2; r++) {
        for (const who of r % 2 === 0 ? (['ours', 'curl'] as const) : (['curl', 'ours'] as const))
          l[who].push(who === 'ours' ? await ours(linkRepo.url, scratch) : await curl(linkRepo.url, scratch));
      }
      const lmbps = (ms: number): number => round(linkSize / 1e6 / (ms / 1000), 0);
      const lo = median(l.ours);
      const lc = median(l.curl);
      say(
        `models: download of ${linkSize / GIB} GiB over a 1 Gbit/s link: swan-provider ${lmbps(lo)} MB/s to verified (turns ${l.ours.map(lmbps).join(', ')}), curl ${lmbps(lc)} MB/s to downloaded (turns ${l.curl.map(lmbps).join(', ')}); throughput ${round(lc / lo, 2)}× curl's, time to verified ${round(lo / lc, 2)}× curl's time to downloaded`,
      );
    } finally {
      await linkRepo.close();
    }

    // ---- 2. the relay's added p99 during a download ----
    const levels: Record<'plain' | 'downloading', RelayLevel[]> = { plain: [], downloading: [] };
    const turns = s.quick ? 1 : 3;
    for (let r = 0; r < turns; r++) {
      for (const who of r % 2 === 0 ? (['plain', 'downloading'] as const) : (['downloading', 'plain'] as const)) {
        const bg = who === 'downloading' ? downloadsRunning(repo.url, scratch) : undefined;
        try {
          const level = await relayLevel(rig, s, 64, 'batched');
          levels[who].push(level);
          say(
            `models: ${who === 'downloading' ? 'downloading' : 'no download'} 64 streams batched: added p99 agent +${level.addedP99} / forwarder +${level.forwarderAddedP99} ms`,
          );
        } finally {
          await bg?.stop();
        }
      }
    }
    const med = (who: 'plain' | 'downloading', k: 'addedP99' | 'forwarderAddedP99'): number => round(median(levels[who].map((l) => l[k])), 3);
    say(
      `models: relay added p99 (median of turns) during a download ${med('downloading', 'addedP99')} ms vs ${med('plain', 'addedP99')} ms without; ` +
        `the forwarder in the same levels ${med('downloading', 'forwarderAddedP99')} / ${med('plain', 'forwarderAddedP99')} ms (its spread is the noise band)`,
    );

    // ---- 3. the fit estimate beside llama-server's own figures ----
    if (!LLAMA_PRESENT) say('models: fit estimate beside llama-server skipped: ../shared/engines/llama.cpp is absent');
    else {
      for (const [name, gguf] of [
        ['tiny.gguf', TINY],
        ['small.gguf', SMALL],
      ] as const) {
        const facts = await readGgufFacts(gguf);
        const est = estimateVram(facts.weights, facts.shape, { contextLength: 512, slots: 2, overheadBytes: 0 });
        const real = await llamaBuffers(gguf, ['-c', '1024', '-np', '2']);
        if (!est.known) throw new Error(`no estimate for ${name}: ${est.reason}`);
        const oursMiB = (est.weightsBytes + est.kvBytes) / MIB;
        const theirs = real.modelMiB + real.kvMiB;
        say(
          `models: fit of ${name} at 512 tokens × 2 slots: estimate weights ${round(est.weightsBytes / MIB, 2)} + KV ${round(est.kvBytes / MIB, 2)} = ${round(oursMiB, 2)} MiB; ` +
            `llama-server model ${real.modelMiB} + KV ${real.kvMiB} = ${round(theirs, 2)} MiB; off by ${round((Math.abs(oursMiB - theirs) / theirs) * 100, 2)} % (target within 10 %)`,
        );
      }
    }
  } finally {
    await repo.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}
