// Issue 42, Medium 5: fingerprint verification as a hash oracle. A hostile engine names any folder with a
// config.json (one like ~/.docker, which holds registry credentials) as its model's root, and a hub's
// fingerprint challenge for files there got their real SHA-256; the composite over them went out in register
// and heartbeat too. Now only weight files of a folder that looks like a model's are ever hashed: the hub
// gets `missing` and no hash, and no composite exists.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryLog } from '../../src/core/base/log';
import { requestJson } from '../../src/core/engine-client/client';
import { handleVerify, type FingerprintResponse } from '../../src/core/hub/verify';
import { engineReader } from '../../src/core/weights/engine-reader';
import { locateModel } from '../../src/core/weights/locate';
import { Weights } from '../../src/core/weights/weights';
import { startTestEngine, type TestEngine } from '../support/engine-server';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
let root: string;
let engine: TestEngine;
const secrets: Record<string, string> = {
  'config.json': JSON.stringify({ auths: { 'registry.example': { auth: 'b3duZXI6aHVudGVyMg==' } } }),
  'notes.txt': 'the owner private notes',
  'helper.py': 'TOKEN = "ghp_owner"',
};

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-oracle-'));
  for (const dir of [path.join(root, 'home', '.docker'), path.join(root, 'plain-config')]) {
    fs.mkdirSync(dir, { recursive: true });
    for (const [n, body] of Object.entries(secrets)) fs.writeFileSync(path.join(dir, n), body);
  }
  engine = await startTestEngine({
    engineType: 'vllm',
    routes: {
      'GET /v1/models': {
        object: 'list',
        data: [
          { id: 'docker', root: path.join(root, 'home', '.docker') },
          { id: 'plain', root: path.join(root, 'plain-config') },
        ],
      },
    },
  });
});
afterAll(async () => {
  await engine?.close();
  fs.rmSync(root, { recursive: true, force: true });
});

describe("a hostile engine names a folder with a config.json and no weights as its model's", () => {
  for (const model of ['docker', 'plain']) {
    it(`${model}: the hub's fingerprint challenge gets no hash of any file there, and no composite is made`, async () => {
      const facts = await locateModel({ url: engine.url, type: 'vllm' }, model, engineReader(2000), { env: { HOME: path.join(root, 'home') } });
      const weights = new Weights({ dir: path.join(root, `weights-${model}`), log: memoryLog().child('weights') });
      try {
        weights.sync([{ model, location: facts.location }]);
        const reply = await handleVerify(
          {
            challenge_id: `ch-${model}`,
            challenge_type: 'fingerprint',
            model_id: model,
            challenge: { files: Object.entries(secrets).map(([filename, body]) => ({ filename, expected_hash: sha(body) })) },
          },
          { resolve: (m) => (m === model ? { endpoint: { url: engine.url } } : undefined), complete: requestJson, weights, weightsWaitMs: 2000 },
        );
        const files = (reply.response as FingerprintResponse | undefined)?.files ?? [];
        for (const body of Object.values(secrets)) expect(JSON.stringify(reply), "a hash of the owner's file went to the hub").not.toContain(sha(body));
        expect(files.every((f) => f.hash === '' && f.status !== 'pass')).toBe(true);
        expect(reply.success).toBe(false);
        expect(weights.compositeHash(model) ?? '').toBe('');
      } finally {
        await weights.close();
      }
    });
  }
});
