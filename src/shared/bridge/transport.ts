// The one typed bridge between the UI and the agent. Both transports carry exactly this: the desktop over
// Electron IPC (src/main + src/preload), the browser console over a WebSocket (src/core/console).
import type { BridgeErrorCode, OwnerConfirmation } from '../bridge-error';
import type { InvokeChannel, InvokeResults } from './channels';
import type { InvokeArgs } from './schemas';
import type { BridgeEvent } from './events';

/** What the renderer sees as `window.swan` (desktop) or its WebSocket twin (browser console). */
export interface SwanBridge {
  invoke<C extends InvokeChannel>(channel: C, args: InvokeArgs<C>): Promise<InvokeResults[C]>;
  /** Receives each batch of events; returns an unsubscribe function. */
  onEvents(cb: (events: BridgeEvent[]) => void): () => void;
  transport: 'ipc' | 'websocket';
}

/**
 * The reply envelope both transports use, so errors reach the UI as text, never as a crash. `error`
 * is the owner's plain message; `code` is stable (src/shared/bridge-error.ts).
 */
export type InvokeReply<T> = { ok: true; value: T } | { ok: false; error: string; code: BridgeErrorCode; confirmation?: OwnerConfirmation };

/**
 * What a transport (Electron IPC in src/main, the console WebSocket in src/core/console) talks to.
 * The Agent implements it: invoke() validates `args` against invokeSchemas and rejects with an Error
 * whose message is plain text for the owner; subscribe() delivers every event unbatched — the
 * transport batches them (a few flushes per second at most).
 */
export interface BridgeBackend {
  invoke(channel: string, args: unknown): Promise<unknown>;
  subscribe(cb: (event: BridgeEvent) => void): () => void;
}
