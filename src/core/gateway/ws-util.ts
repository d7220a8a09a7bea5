// Small WebSocket helpers shared by both dialects: send a JSON object if the socket is open, and a
// keep-alive that pings the peer and drops it when a ping goes unanswered for a whole interval.
import { WebSocket } from 'ws';

export function sendJson(ws: WebSocket, msg: Record<string, unknown>): void {
  if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(msg));
}

/** Pings every intervalMs (and calls onBeat); terminates a peer that did not pong since the last ping. Returns stop(). */
export function keepAlive(ws: WebSocket, intervalMs: number, onBeat?: () => void): () => void {
  let alive = true;
  const onPong = () => {
    alive = true;
  };
  ws.on('pong', onPong);
  const timer = setInterval(() => {
    if (ws.readyState !== WebSocket.OPEN) return;
    if (!alive) {
      ws.terminate();
      return;
    }
    alive = false;
    ws.ping();
    onBeat?.();
  }, intervalMs);
  timer.unref();
  return () => {
    clearInterval(timer);
    ws.off('pong', onPong);
  };
}

/** Close codes used by the gateway. */
export const CLOSE = {
  normal: 1000,
  goingAway: 1001,
  policy: 1008,
  tooBig: 1009,
  internal: 1011,
} as const;
