// The only code that touches ipcMain. One invoke channel carries every typed call (checked and validated
// in ipc-guard.ts); one push channel carries event batches, and only once the renderer said it listens.
import { ipcMain, type BrowserWindow, type IpcMainEvent, type IpcMainInvokeEvent } from 'electron';
import type { Logger } from '../core/base/log';
import { createEventBatcher } from '../shared/batcher';
import type { BridgeBackend, InvokeReply } from '../shared/bridge/transport';
import type { InvokeChannel } from '../shared/bridge/channels';
import type { BridgeEvent } from '../shared/bridge/events';
import { createEventGate } from './event-gate';
import { checkSender, guardedInvoke, type RendererLocation, type SenderInfo } from './ipc-guard';

/** Channel names shared with src/preload/index.ts (kept as literals there: the preload bundles nothing of main). */
export const IPC = { invoke: 'swan:invoke', events: 'swan:events', ready: 'swan:ready' } as const;

/** Live data reaches the window at most this often. */
export const PUSH_INTERVAL_MS = 250;

export interface IpcOptions {
  backend: BridgeBackend;
  window: BrowserWindow;
  renderer: RendererLocation;
  log: Logger;
  intervalMs?: number;
  /** Called after each successful call (main re-reads settings after settings.save). */
  onInvoked?: (channel: InvokeChannel, value: unknown) => void;
}

function senderOf(event: IpcMainEvent | IpcMainInvokeEvent): SenderInfo {
  const frame = event.senderFrame;
  return { webContentsId: event.sender.id, frameUrl: frame ? frame.url : null, isMainFrame: frame ? frame.parent === null : false };
}

/** Wires the window to the backend. Returns the undo. */
export function installIpc(opts: IpcOptions): () => void {
  const { backend, window, renderer, log } = opts;
  const contents = window.webContents;
  const expected = { webContentsId: contents.id, renderer };

  const gate = createEventGate((batch: BridgeEvent[]) => {
    if (contents.isDestroyed()) return;
    contents.send(IPC.events, batch);
  });
  const batcher = createEventBatcher((events) => gate.push(events), opts.intervalMs ?? PUSH_INTERVAL_MS);
  const unsubscribe = backend.subscribe((event) => batcher.push(event));

  ipcMain.handle(IPC.invoke, async (event, channel: unknown, args: unknown): Promise<InvokeReply<unknown>> => {
    const reply = await guardedInvoke({ backend, log, expected }, senderOf(event), channel, args);
    if (reply.ok && opts.onInvoked) {
      try {
        opts.onInvoked(channel as InvokeChannel, reply.value);
      } catch (err) {
        log.warn(`After ${String(channel)}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    // Events pending in the batcher predate this reply: send them first, or a reply that already
    // contains them (requests.text) would be followed by the same deltas again.
    batcher.flush();
    return reply;
  });

  const onReady = (event: IpcMainEvent): void => {
    const verdict = checkSender(senderOf(event), expected);
    if (!verdict.ok) {
      log.warn(`Dropped a ready signal: ${verdict.reason}`);
      return;
    }
    gate.setReady(true);
  };
  ipcMain.on(IPC.ready, onReady);

  // A reload or a crash: hold pushes until the new page subscribes again.
  const notReady = (): void => gate.setReady(false);
  contents.on('did-start-loading', notReady);
  contents.on('render-process-gone', notReady);

  return () => {
    unsubscribe();
    batcher.close();
    gate.close();
    ipcMain.removeHandler(IPC.invoke);
    ipcMain.removeListener(IPC.ready, onReady);
    if (!contents.isDestroyed()) {
      contents.removeListener('did-start-loading', notReady);
      contents.removeListener('render-process-gone', notReady);
    }
  };
}
