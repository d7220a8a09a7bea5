// The one way the UI reaches the agent. The desktop preload provides `window.swan`; in a plain browser
// the console's WebSocket carries the same bridge. Pages cannot tell which one they have.
import type { SwanBridge } from '../../shared/bridge/transport';
import { alwaysOpen, type ConnectionSource } from './connection';
import { WebSocketBridge } from './ws-bridge';

declare global {
  interface Window {
    swan?: SwanBridge;
  }
}

let bridge: SwanBridge | undefined;
let connection: ConnectionSource = alwaysOpen;

function socketUrl(): { url: string; session: string } {
  const token = new URLSearchParams(window.location.search).get('token');
  const scheme = window.location.protocol === 'https:' ? 'wss:' : 'ws:';
  const query = token ? `?token=${encodeURIComponent(token)}` : '';
  return { url: `${scheme}//${window.location.host}/bridge${query}`, session: `/session${query}` };
}

export function getBridge(): SwanBridge {
  if (bridge) return bridge;
  if (window.swan) {
    bridge = window.swan;
  } else {
    const { url, session } = socketUrl();
    const ws = new WebSocketBridge(url, session);
    bridge = ws;
    connection = ws;
  }
  return bridge;
}

export function getConnection(): ConnectionSource {
  getBridge();
  return connection;
}

export type { ConnectionStatus } from './connection';
