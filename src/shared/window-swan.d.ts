// `window.swan`: the bridge the desktop preload exposes (src/preload/index.ts). In the browser console it
// is absent and the renderer opens the WebSocket transport instead.
import type { SwanBridge } from './bridge/transport';

declare global {
  interface Window {
    swan?: SwanBridge;
  }
}

export {};
