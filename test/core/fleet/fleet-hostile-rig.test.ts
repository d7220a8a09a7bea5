// A "rig" that answers anything but a fleet API answer — not JSON, JSON nested a thousand deep, an answer
// over the size limit, the wrong shape, nothing at all in time — is refused with a stable code when added,
// and shown as unreadable or unreachable when a rig that was fine turns so; the reader goes on.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FleetReader } from '../../../src/core/fleet/fleet-reader';
import { FleetStore } from '../../../src/core/fleet/fleet-store';
import { memoryLog } from '../../../src/core/base/log';
import type { RigSummary } from '../../../src/shared/fleet';
import { tempHome } from '../../support/stack';

function summary(nodeId: string): RigSummary {
  const zero = { requests: 0, errors: 0, tokensIn: 0, tokensOut: 0, earnings: 0 };
  return {
    api: 1,
    nodeId,
    nodeName: nodeId,
    version: '0.1.0',
    at: Date.now(),
    access: 'read',
    link: { state: 'connected', since: 1 },
    paused: false,
    models: [],
    gpus: [],
    gpuMetrics: false,
    today: zero,
    month: zero,
    earningsEnabled: true,
    alerts: [],
  };
}

type Mode = 'ok' | 'not-json' | 'deep' | 'huge' | 'wrong-shape' | 'silent' | 'version-2';
let mode: Mode = 'ok';
let server: http.Server;
let base: string;

beforeAll(async () => {
  server = http.createServer((_req, res) => {
    const json = (v: unknown) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(typeof v === 'string' ? v : JSON.stringify(v));
    };
    if (mode === 'ok') return json(summary('hostile-rig'));
    if (mode === 'not-json') return json('<html>hello</html>');
    if (mode === 'deep') return json('['.repeat(5000) + ']'.repeat(5000));
    if (mode === 'huge') return json({ ...summary('hostile-rig'), pad: 'x'.repeat(2 * 1024 * 1024) });
    if (mode === 'wrong-shape') return json({ ...summary('hostile-rig'), models: 'all of them', today: { requests: -5 } });
    if (mode === 'version-2') return json({ ...summary('hostile-rig'), api: 2 });
    // silent: never answers
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => {
  server.closeAllConnections();
  server.close();
});

function reader(): FleetReader {
  const secrets = new Map<string, string>();
  const store = new FleetStore(tempHome('swan-fleet-hostile-'), {
    get: (k) => secrets.get(k),
    set: (k, v) => void secrets.set(k, v),
    delete: (k) => void secrets.delete(k),
  });
  return new FleetReader({
    store,
    self: () => summary('this-rig'),
    selfUsage: () => Promise.reject(new Error('unused')),
    log: memoryLog().child('fleet'),
    timeoutMs: 500,
    pollMs: 60_000,
  });
}

const TOKEN = 'swan-fleet-0123456789abcdef0123456789abcdef';

describe('a rig that answers nonsense', () => {
  it.each([
    ['not-json', 'rig_bad_answer'],
    ['deep', 'rig_bad_answer'],
    ['huge', 'rig_bad_answer'],
    ['wrong-shape', 'rig_bad_answer'],
    ['version-2', 'rig_bad_answer'],
    ['silent', 'rig_unreachable'],
  ] as const)('%s: not added (%s)', async (m, code) => {
    mode = m;
    const r = reader();
    await expect(r.add({ url: base, token: TOKEN })).rejects.toMatchObject({ code });
    expect(r.view().rigs).toHaveLength(1);
  });

  it('a good rig that turns bad is kept, marked, with its last answer', async () => {
    mode = 'ok';
    const r = reader();
    const added = await r.add({ url: base, token: TOKEN });
    const id = added.rigs[1]!.id;
    mode = 'deep';
    await r.poll();
    let rig = r.view().rigs.find((x) => x.id === id)!;
    expect(rig).toMatchObject({ status: 'invalid', errorCode: 'rig_bad_answer', summary: { nodeId: 'hostile-rig' } });
    mode = 'silent';
    await r.poll();
    rig = r.view().rigs.find((x) => x.id === id)!;
    expect(rig).toMatchObject({ status: 'unreachable', errorCode: 'rig_unreachable' });
    mode = 'ok';
    await r.poll();
    expect(r.view().rigs.find((x) => x.id === id)!.status).toBe('ok');
  });
});
