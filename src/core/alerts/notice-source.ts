// Hub notices reach the alert list through this adapter, so the alert code does not depend on how
// notices are carried: today they arrive as a bridge event ({ type: 'notice', … }); the adapter reads
// the common field names and ignores anything it cannot read.
export interface HubNotice {
  title?: string;
  message: string;
}

/** Calls back with each notice; returns an unsubscribe function. */
export type NoticeSource = (cb: (n: HubNotice) => void) => () => void;

function str(v: unknown, max: number): string | undefined {
  return typeof v === 'string' && v.trim() !== '' ? v.trim().slice(0, max) : undefined;
}

/** Reads a notice out of a bridge event, or undefined when the event is not a notice. */
export function noticeFromEvent(ev: unknown): HubNotice | undefined {
  if (!ev || typeof ev !== 'object' || (ev as { type?: unknown }).type !== 'notice') return undefined;
  const body = ((ev as { notice?: unknown }).notice ?? ev) as Record<string, unknown>;
  const message = str(body.message, 1000) ?? str(body.text, 1000) ?? str(body.body, 1000);
  if (!message) return undefined;
  const title = str(body.title, 200);
  return { message, ...(title ? { title } : {}) };
}

/** A NoticeSource over something that emits bridge events (the Agent's `subscribe`). */
export function noticesFromBridge(subscribe: (cb: (ev: unknown) => void) => () => void): NoticeSource {
  return (cb) => subscribe((ev) => {
    const n = noticeFromEvent(ev);
    if (n) cb(n);
  });
}
