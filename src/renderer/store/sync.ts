// Keeps the store in step with the agent: listens to event batches, and (re)loads the full state
// whenever the transport (re)connects — events missed while disconnected are not replayed.
import type { SwanBridge } from '../../shared/bridge/transport';
import type { ConnectionSource } from '../bridge/connection';
import { applyEvents, loadHistory, resetRequests, setConnection, setHubNotices, setLoadError, setSettings, setSnapshot } from './actions';

export async function loadAll(bridge: SwanBridge): Promise<void> {
  try {
    setSnapshot(await bridge.invoke('snapshot.get', {}));
  } catch (err) {
    setLoadError(`Could not read the agent's state: ${(err as Error).message}`);
    return;
  }
  // The rest fills in as it comes; one failure must not block the others.
  const parts: Promise<void>[] = [
    bridge.invoke('settings.get', {}).then(setSettings),
    bridge.invoke('requests.list', { limit: 10_000 }).then(resetRequests),
    bridge.invoke('gpu.history', { minutes: 60 }).then(loadHistory),
    bridge.invoke('notices.list', {}).then(setHubNotices),
  ];
  const results = await Promise.allSettled(parts);
  for (const r of results) if (r.status === 'rejected') console.warn(`console: ${(r.reason as Error).message}`);
}

export function startSync(bridge: SwanBridge, connection: ConnectionSource): () => void {
  const offEvents = bridge.onEvents(applyEvents);
  setConnection(connection.status);
  if (connection.status === 'open') void loadAll(bridge);
  const offStatus = connection.onStatus((status) => {
    setConnection(status);
    if (status === 'open') void loadAll(bridge);
  });
  return () => {
    offEvents();
    offStatus();
  };
}
