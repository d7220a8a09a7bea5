// Builds the real preload with the project's electron-vite config and runs it the way a sandboxed
// renderer does: a fresh JS context whose `require` knows only 'electron'. Its ipcRenderer is wired to
// the real main-side guard (guardedInvoke), so a call travels preload -> guard -> backend -> preload.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import vm from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryLog } from '../../src/core/base/log';
import { BridgeError } from '../../src/shared/bridge-error';
import type { SwanBridge } from '../../src/shared/bridge/transport';
import type { BridgeEvent } from '../../src/shared/bridge/events';
import { guardedInvoke, type SenderInfo } from '../../src/main/ipc-guard';
import { StandInBackend } from '../support/bridge-backend';

const root = path.resolve(__dirname, '../..');
let outDir: string;
let code: string;

beforeAll(async () => {
  outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-preload-'));
  const { loadConfigFromFile, PreloadConfigFactory } = await import('electron-vite');
  const { build } = await import('vite');
  const loaded = await loadConfigFromFile({ mode: 'production', command: 'build' }, 'electron.vite.config.ts', root, 'silent');
  expect(loaded.config.preload, 'electron.vite.config.ts has a preload section').toBeDefined();
  const config = await new PreloadConfigFactory(
    loaded.config.preload!,
    { configFile: false, logLevel: 'silent', root, build: { outDir } },
    { outDir, root },
  ).build();
  await build(config);
  code = fs.readFileSync(path.join(outDir, 'preload', 'index.cjs'), 'utf8');
}, 60_000);

afterAll(() => {
  if (outDir) fs.rmSync(outDir, { recursive: true, force: true });
});

/** Loads the bundle in a sandbox-like context and records what it does with ipcRenderer. */
function loadPreload() {
  const backend = new StandInBackend({
    'models.warmup': ({ model }) => {
      throw new BridgeError('not_found', `Model ${model} is not served by any engine. Start its engine first.`);
    },
    'serving.resume': () => ({ paused: false }),
  });
  const exposed = new Map<string, unknown>();
  const sent: string[] = [];
  const listeners = new Map<string, (event: unknown, ...args: unknown[]) => void>();
  let invokes = 0;
  const sender: SenderInfo = { webContentsId: 1, frameUrl: 'file:///app/out/renderer/index.html', isMainFrame: true };
  const ctx = {
    backend,
    log: memoryLog().child('ipc'),
    expected: { webContentsId: 1, renderer: { kind: 'file' as const, indexFile: '/app/out/renderer/index.html' } },
  };
  const electron = {
    contextBridge: { exposeInMainWorld: (key: string, api: unknown) => exposed.set(key, api) },
    ipcRenderer: {
      invoke: async (channel: string, ...args: unknown[]) => {
        invokes++;
        if (channel !== 'swan:invoke') throw new Error(`unexpected channel ${channel}`);
        // What crosses IPC is structured-cloned; JSON is close enough for these plain values.
        const [ch, a] = JSON.parse(JSON.stringify(args)) as [unknown, unknown];
        return guardedInvoke(ctx, sender, ch, a);
      },
      send: (channel: string) => sent.push(channel),
      on: (channel: string, fn: (event: unknown, ...args: unknown[]) => void) => listeners.set(channel, fn),
    },
  };
  const required: string[] = [];
  const sandbox = {
    require: (name: string) => {
      required.push(name);
      if (name === 'electron') return electron;
      throw new Error(`a sandboxed preload cannot require ${name}`);
    },
    module: { exports: {} },
    exports: {},
    console,
  };
  vm.runInNewContext(code, sandbox, { filename: 'preload/index.cjs' });
  return {
    bridge: exposed.get('swan') as SwanBridge,
    exposed,
    sent,
    required,
    backend,
    invokes: () => invokes,
    push: (batch: unknown) => listeners.get('swan:events')?.({}, batch),
  };
}

describe('preload bundle', () => {
  it('is one CommonJS file that requires only electron', () => {
    const requires = [...code.matchAll(/\brequire\(\s*["']([^"']+)["']\s*\)/g)].map((m) => m[1]);
    expect([...new Set(requires)]).toEqual(['electron']);
    expect(code).not.toMatch(/^\s*import\s|^\s*export\s/m);
  });

  it('exposes only window.swan with transport, invoke and onEvents — never ipcRenderer', () => {
    const p = loadPreload();
    expect([...p.exposed.keys()]).toEqual(['swan']);
    expect(Object.keys(p.bridge).sort()).toEqual(['invoke', 'onEvents', 'transport']);
    expect(p.bridge.transport).toBe('ipc');
    expect(p.required).toEqual(['electron']);
    expect(p.sent).toEqual([]); // not ready until the page subscribes
  });

  it('returns the value of a valid call through the real guard', async () => {
    const p = loadPreload();
    await expect(p.bridge.invoke('serving.resume', {})).resolves.toEqual({ paused: false });
    expect(p.backend.calls).toEqual([{ channel: 'serving.resume', args: {} }]);
  });

  it('rejects unknown channels in the preload, before anything is sent', async () => {
    const p = loadPreload();
    const call = (p.bridge.invoke as (c: string, a: unknown) => Promise<unknown>)('fs.readFile', { path: '/etc/passwd' });
    await expect(call).rejects.toMatchObject({ name: 'BridgeError', code: 'unknown_channel' });
    expect(p.invokes()).toBe(0);
  });

  it('turns { ok: false } into a thrown Error carrying the text: bad arguments and backend errors', async () => {
    const p = loadPreload();
    await expect(p.bridge.invoke('gpu.history', { minutes: 0 })).rejects.toMatchObject({ name: 'BridgeError', code: 'invalid_args' });
    expect(p.backend.calls).toEqual([]);
    // The backend's code and its text both reach the page.
    await expect(p.bridge.invoke('models.warmup', { model: 'llama3' })).rejects.toMatchObject({
      name: 'BridgeError',
      code: 'not_found',
      message: 'Model llama3 is not served by any engine. Start its engine first.',
    });
  });

  it('says ready once when the page first subscribes, delivers batches, and unsubscribes', () => {
    const p = loadPreload();
    const a: BridgeEvent[][] = [];
    const b: BridgeEvent[][] = [];
    const offA = p.bridge.onEvents((e) => a.push(e));
    p.bridge.onEvents((e) => b.push(e));
    expect(p.sent).toEqual(['swan:ready']);
    const batch: BridgeEvent[] = [{ type: 'request.text', id: 'r1', delta: 'Hello' }];
    p.push(batch);
    offA();
    p.push([{ type: 'request.text', id: 'r1', delta: ' world' }]);
    p.push({ not: 'an array' });
    expect(a).toEqual([batch]);
    expect(b).toHaveLength(2);
  });
});
