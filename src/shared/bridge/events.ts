// What the agent pushes to the UI: every event one variant of BridgeEvent, delivered in batches.
import type { GpuSample, LogEntry, RequestView } from '../types';
import type { Alert } from '../alerts';
import type { FleetView } from '../fleet';
import type { ApprovalView } from '../bridge-error';
import type { AgentSnapshot, HubNoticeView } from '../views/snapshot';
import type { UpdateDownloadView } from '../views/settings';

/** Events pushed to the UI, in batches (a few per second at most). */
export type BridgeEvent =
  | { type: 'snapshot'; snapshot: AgentSnapshot }
  | { type: 'gpu.sample'; sample: GpuSample }
  | { type: 'request.update'; request: RequestView }
  | { type: 'request.text'; id: string; delta: string }
  | { type: 'log'; entry: LogEntry }
  | { type: 'notice'; notice: HubNoticeView }
  | { type: 'alert'; alert: Alert }
  | { type: 'update.download'; download: UpdateDownloadView }
  /** An approval the owner was asked for ended (OWNER_CONFIRMATION_REQUIRED): approved, denied, expired, failed. */
  | { type: 'approval'; approval: ApprovalView }
  | { type: 'fleet'; fleet: FleetView };

export type BridgeEventType = BridgeEvent['type'];
