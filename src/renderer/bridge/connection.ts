// The state of the link between this page and the agent (the WebSocket of the browser console; the
// desktop's IPC is always 'open').
export type ConnectionStatus = 'connecting' | 'open' | 'reconnecting' | 'unauthorized';

export interface ConnectionSource {
  readonly status: ConnectionStatus;
  /** Called on every change; returns an unsubscribe function. */
  onStatus(cb: (status: ConnectionStatus) => void): () => void;
}

export const alwaysOpen: ConnectionSource = {
  status: 'open',
  onStatus: () => () => undefined,
};
