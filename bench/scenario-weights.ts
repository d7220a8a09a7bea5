// BENCH_ONLY=weights: what proving weights costs. Two figures, each beside its baseline in the same run:
//   1. hashing speed: the agent's worker-thread hasher (src/core/weights/hasher.ts) against coreutils'
//      `sha256sum` on the same file of 1 GiB the bench writes, in alternating turns (the file is in the page
//      cache after the first read: both measure hashing, not the disk);
//   2. the relay's added p99 while a hash runs: the 64-stream batched level with the agent hashing a model's
//      weights (a llama.cpp stand-in whose /props names a 32 GiB sparse GGUF: zeros from the page cache, so
//      the hasher runs flat out on CPU, the worst case for the relay) against the same level with no hash,
//      each on a freshly started agent, in alternating turns, the forwarder's figure in the same levels as the
//      noise band. Prints; writes nothing.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { WorkerHasher } from '../src/core/weights/hasher';
import type { Rig } from './rig';
import { relayLevel, type RelayLevel } from './scenario-latency';
import type { BenchSettings } from './settings';
import { median, round } from './stats';

const GIB = 1024 ** 3;
const MODEL = 'weights-bench';

/** A file of `bytes` that is not zeros (16 MiB random blocks, each one changed), written once. */
function writeWeightsFile(file: string, bytes: number): void {
  const block = randomBytes(16 * 1024 * 1024);
  const fd = fs.openSync(file, 'w');
  try {
    for (let done = 0, i = 0; done < bytes; done += block.length, i++) {
      block.writeUInt32LE(i, 0);
      fs.writeSync(fd, block, 0, Math.min(block.length, bytes - done));
    }
  } finally {
    fs.closeSync(fd);
  }
}

function sha256sum(file: string): Promise<{ ms: number; hash: string }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const p = spawn('sha256sum', [file], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.on('error', reject);
    p.on('exit', (code) =>
      code === 0 ? resolve({ ms: performance.now() - t0, hash: out.split(/\s/)[0] ?? '' }) : reject(new Error(`sha256sum exited ${code}`)),
    );
  });
}

/** A llama.cpp stand-in for the hashed model: /props names the file, /v1/models lists it, a chat gets one token. */
async function llamaStandIn(modelPath: string): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    const send = (body: unknown): void => {
      const text = JSON.stringify(body);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    };
    req.resume();
    req.on('end', () => {
      const p = (req.url ?? '/').split('?')[0];
      if (p === '/props')
        return send({
          default_generation_settings: { n_ctx: 512 },
          total_slots: 1,
          model_path: modelPath,
          model_ftype: 'all F32',
          modalities: { vision: false },
        });
      if (p === '/v1/models') return send({ object: 'list', data: [{ id: MODEL, object: 'model', owned_by: 'llamacpp' }] });
      if (p === '/health') return send({ status: 'ok' });
      if (p === '/v1/chat/completions')
        return send({
          id: 'c',
          object: 'chat.completion',
          model: MODEL,
          choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        });
      res.writeHead(404).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((r) => server.close(() => r())) };
}

function logText(home: string): string {
  try {
    return fs.readFileSync(path.join(home, 'logs', 'agent.jsonl'), 'utf8');
  } catch {
    return '';
  }
}

async function waitFor(cond: () => boolean, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function weightsBench(rig: Rig, s: BenchSettings, say: (line: string) => void): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-bench-weights-'));
  const standIn = await llamaStandIn(path.join(dir, 'sparse-32gib.gguf'));
  const modelsFile = path.join(rig.home, 'models.json');
  const plainModels = fs.readFileSync(modelsFile, 'utf8');
  try {
    // ---- 1. hashing speed, beside sha256sum ----
    const file = path.join(dir, 'weights-1gib.bin');
    say('weights: writing a 1 GiB file…');
    writeWeightsFile(file, GIB);
    const hasher = new WorkerHasher();
    const ours: number[] = [];
    const theirs: number[] = [];
    const rounds = s.quick ? 2 : 3;
    await sha256sum(file); // into the page cache
    for (let r = 0; r < rounds; r++) {
      for (const who of r % 2 === 0 ? (['ours', 'sha256sum'] as const) : (['sha256sum', 'ours'] as const)) {
        if (who === 'ours') {
          const t0 = performance.now();
          const h = await hasher.hash(file);
          ours.push(performance.now() - t0);
          const check = await sha256sum(file);
          if (check.hash !== h.sha256) throw new Error(`the hasher's sha256 ${h.sha256} differs from sha256sum's ${check.hash}`);
          theirs.push(check.ms);
        } else theirs.push((await sha256sum(file)).ms);
      }
    }
    await hasher.stop();
    const gbps = (ms: number): number => round(GIB / 1e9 / (ms / 1000), 2);
    say(
      `weights: hashing 1 GiB: agent's hasher ${gbps(median(ours))} GB/s (turns ${ours.map((m) => gbps(m)).join(', ')}), ` +
        `sha256sum ${gbps(median(theirs))} GB/s (turns ${theirs.map((m) => gbps(m)).join(', ')}); ratio ${round(median(theirs) / median(ours), 2)}`,
    );
    fs.rmSync(file, { force: true });

    // ---- 2. the relay's added p99 while a hash runs ----
    const sparse = path.join(dir, 'sparse-32gib.gguf');
    const fd = fs.openSync(sparse, 'w');
    fs.writeSync(fd, 'GGUF'); // the magic the agent checks before it hashes a GGUF
    fs.ftruncateSync(fd, 32 * GIB);
    fs.closeSync(fd);
    const withHash = JSON.stringify(
      { ...(JSON.parse(plainModels) as Record<string, unknown>), [MODEL]: { endpoint: standIn.url, local_model: MODEL } },
      null,
      2,
    );
    const levels: Record<'plain' | 'hashing', RelayLevel[]> = { plain: [], hashing: [] };
    const turns = s.quick ? 1 : 3;
    for (let r = 0; r < turns; r++) {
      for (const who of r % 2 === 0 ? (['plain', 'hashing'] as const) : (['hashing', 'plain'] as const)) {
        fs.writeFileSync(modelsFile, who === 'hashing' ? withHash : plainModels);
        fs.rmSync(path.join(rig.home, 'weights'), { recursive: true, force: true });
        const logBefore = logText(rig.home).length;
        await rig.restartAgent();
        if (who === 'hashing')
          await waitFor(() => logText(rig.home).slice(logBefore).includes(`verifying weights of ${MODEL}`), 'the agent to start hashing', 60_000);
        const level = await relayLevel(rig, s, 64, 'batched');
        const log = logText(rig.home).slice(logBefore);
        if (who === 'hashing' && log.includes(`weights of ${MODEL} verified`)) say('weights: note: the hash ended before the level did');
        levels[who].push(level);
        say(
          `weights: ${who === 'hashing' ? 'while hashing' : 'no hash     '} 64 streams batched: added p99 agent +${level.addedP99} / forwarder +${level.forwarderAddedP99} ms, ` +
            `added p50 agent +${level.addedP50} / forwarder +${level.forwarderAddedP50} ms`,
        );
      }
    }
    type Key = 'addedP99' | 'forwarderAddedP99' | 'addedP50' | 'forwarderAddedP50';
    const med = (who: 'plain' | 'hashing', k: Key): number => round(median(levels[who].map((l) => l[k])), 3);
    const turnsOf = (who: 'plain' | 'hashing', k: Key): string => levels[who].map((l) => l[k]).join(', ');
    say(
      `weights: relay added p99 (median of turns) while a hash runs ${med('hashing', 'addedP99')} ms [${turnsOf('hashing', 'addedP99')}] vs ${med('plain', 'addedP99')} ms without [${turnsOf('plain', 'addedP99')}]; ` +
        `the forwarder in the same levels ${med('hashing', 'forwarderAddedP99')} / ${med('plain', 'forwarderAddedP99')} ms (its spread is the noise band)`,
    );
    say(
      `weights: relay added p50 while a hash runs ${med('hashing', 'addedP50')} ms vs ${med('plain', 'addedP50')} ms without; forwarder ${med('hashing', 'forwarderAddedP50')} / ${med('plain', 'forwarderAddedP50')} ms`,
    );
  } finally {
    fs.writeFileSync(modelsFile, plainModels);
    fs.rmSync(path.join(rig.home, 'weights'), { recursive: true, force: true });
    await rig.restartAgent().catch(() => undefined);
    await standIn.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
