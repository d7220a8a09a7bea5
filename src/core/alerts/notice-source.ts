// Hub notices reach the alert list through this adapter, so the alert code does not depend on how
// notices are carried: the agent wires it to the NoticeBook's 'notice' event (not to the whole bridge,
// which would keep a listener on every per-chunk console event even with no console open); the adapter
// reads the common field names and ignores anything it cannot read.
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

/** A NoticeSource over something that emits 'notice' with the notice itself (the agent's NoticeBook). */
export function noticesFromEmitter(book: {
  on(event: 'notice', cb: (notice: unknown) => void): unknown;
  off(event: 'notice', cb: (notice: unknown) => void): unknown;
}): NoticeSource {
  return (cb) => {
    const listener = (notice: unknown): void => {
      const n = noticeFromEvent({ type: 'notice', notice });
      if (n) cb(n);
    };
    book.on('notice', listener);
    return () => {
      book.off('notice', listener);
    };
  };
}
