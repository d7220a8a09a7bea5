// The preload: exposes `window.swan` (a SwanBridge) and nothing else — named verbs, never ipcRenderer.
// Runs sandboxed, so it is bundled as one CommonJS file with only `electron` left to require.
import { contextBridge, ipcRenderer, type IpcRendererEvent } from 'electron';
import type { InvokeReply, SwanBridge } from '../shared/bridge/transport';
import { isInvokeChannel, type InvokeChannel, type InvokeResults } from '../shared/bridge/channels';
import type { InvokeArgs } from '../shared/bridge/schemas';
import type { BridgeEvent } from '../shared/bridge/events';
import { BridgeError, isBridgeErrorCode } from '../shared/bridge-error';

// Same names as IPC in src/main/ipc.ts.
const INVOKE = 'swan:invoke';
const EVENTS = 'swan:events';
const READY = 'swan:ready';

const listeners = new Set<(events: BridgeEvent[]) => void>();
let announced = false;

function dispatch(_event: IpcRendererEvent, batch: unknown): void {
  if (!Array.isArray(batch)) return;
  for (const cb of listeners) {
    try {
      cb(batch as BridgeEvent[]);
    } catch (err) {
      console.error('swan: an event listener threw', err);
    }
  }
}
ipcRenderer.on(EVENTS, dispatch);

function isReply(x: unknown): x is InvokeReply<unknown> {
  return typeof x === 'object' && x !== null && typeof (x as { ok?: unknown }).ok === 'boolean';
}

const bridge: SwanBridge = {
  transport: 'ipc',
  async invoke<C extends InvokeChannel>(channel: C, args: InvokeArgs<C>): Promise<InvokeResults[C]> {
    if (!isInvokeChannel(channel)) throw new BridgeError('unknown_channel', `Unknown action ${String(channel).slice(0, 64)}.`);
    const reply: unknown = await ipcRenderer.invoke(INVOKE, channel, args);
    if (!isReply(reply)) throw new BridgeError('failed', `The app sent an unreadable answer to ${channel}. Restart the app.`);
    if (!reply.ok) throw new BridgeError(isBridgeErrorCode(reply.code) ? reply.code : 'failed', reply.error, undefined, reply.confirmation);
    return reply.value as InvokeResults[C];
  },
  onEvents(cb) {
    if (typeof cb !== 'function') throw new TypeError('onEvents needs a function');
    listeners.add(cb);
    // Main holds pushes until the page listens; tell it once per page load.
    if (!announced) {
      announced = true;
      ipcRenderer.send(READY);
    }
    return () => {
      listeners.delete(cb);
    };
  },
};

contextBridge.exposeInMainWorld('swan', bridge);
