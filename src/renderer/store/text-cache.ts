// Streaming text of the most recent requests (bounded), plus the join of fetched text with deltas that
// arrived while the fetch was in flight.

export const TEXT_REQUESTS_KEPT = 50;

export class TextCache {
  private readonly texts = new Map<string, string>();
  private pinned: string | null = null;

  constructor(private readonly keep = TEXT_REQUESTS_KEPT) {}

  append(id: string, delta: string): void {
    const prev = this.texts.get(id);
    if (prev === undefined) {
      this.texts.set(id, delta);
      this.evict();
    } else {
      this.texts.set(id, prev + delta);
    }
  }

  get(id: string): string | undefined {
    return this.texts.get(id);
  }

  has(id: string): boolean {
    return this.texts.has(id);
  }

  /** Stores text fetched from the agent: the fetch is the truth for what it covers. */
  set(id: string, text: string): void {
    this.texts.set(id, text);
    this.evict();
  }

  /** The selected request is never evicted. */
  pin(id: string | null): void {
    this.pinned = id;
  }

  private evict(): void {
    while (this.texts.size > this.keep) {
      const oldest = [...this.texts.keys()].find((k) => k !== this.pinned);
      if (oldest === undefined) return;
      this.texts.delete(oldest);
    }
  }
}

/**
 * Joins the text fetched from the agent with the deltas received while the fetch was in flight. The agent
 * sends the deltas its book holds before it reads the text (AgentActions.requestText), and both transports
 * flush their event batch before sending a reply, so deltas emitted before the agent read the text arrive
 * before the reply (they are the tail of `fetched`) and later ones arrive after it. Should a
 * delta land in between anyway, the longest suffix of `fetched` that is a prefix of `during` counts once.
 */
export function joinFetched(fetched: string, during: string): string {
  if (!during) return fetched;
  const max = Math.min(fetched.length, during.length);
  for (let n = max; n > 0; n--) {
    if (fetched.endsWith(during.slice(0, n))) return fetched + during.slice(n);
  }
  return fetched + during;
}
