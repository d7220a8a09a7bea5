// The hub connection and the relay as plain data: what tools and tests read instead of holding the link.
// A copy each call; reading it changes nothing.
import type { LinkStatus } from '../../shared/types';
import type { HubLink } from '../hub/link';
import type { HubRelay } from '../hub/relay';

export interface HubStatus extends LinkStatus {
  connected: boolean;
  /** Since the agent started: frames sent and received, inbound frames refused as invalid, dials, outbound refused as oversize. */
  counters: HubLink['counters'];
  /** Data messages waiting for the socket to drain (backpressure from the hub). */
  queuedDataMessages: number;
  relay: {
    /** Hub requests running now. */
    activeCount: number;
    /** What is kept for resuming streams across a dropped link. */
    retainedBytes: number;
    retainedRequests: number;
    counters: HubRelay['counters'];
  };
}

export function hubStatus(link: HubLink, relay: HubRelay): HubStatus {
  return {
    ...link.state,
    connected: link.connected,
    counters: { ...link.counters },
    queuedDataMessages: link.queuedDataMessages,
    relay: { activeCount: relay.activeCount, retainedBytes: relay.retainedBytes, retainedRequests: relay.retainedRequests, counters: { ...relay.counters } },
  };
}
