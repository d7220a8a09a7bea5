// Retention of what each hub stream sent (resume-v1): every stream_chunk / stream_end of a request is
// kept, by seq, until the request has finished and the hub cannot ask for it any more. Bounded by
// total bytes (oldest request evicted first) and by a TTL.

interface Kept<T> {
  messages: Array<{ seq: number; msg: T; bytes: number }>;
  bytes: number;
  finishedAt?: number;
  touchedAt: number;
}

/** Keeps items of type T (the relay keeps each message already serialised). */
export class Retention<T> {
  private readonly kept = new Map<string, Kept<T>>();
  private total = 0;

  constructor(
    private readonly maxBytes: number,
    /** Called with the ids evicted to stay under maxBytes (their engine requests should be cancelled). */
    private readonly onEvict: (requestId: string) => void,
  ) {}

  add(requestId: string, seq: number, msg: T, bytes: number): void {
    const k = this.kept.get(requestId) ?? { messages: [], bytes: 0, touchedAt: Date.now() };
    k.messages.push({ seq, msg, bytes });
    k.bytes += bytes;
    k.touchedAt = Date.now();
    this.kept.set(requestId, k);
    this.total += bytes;
    // Past the cap the oldest request goes (cancelled by onEvict), finished ones first; a single
    // request larger than the whole cap is itself dropped and cancelled, never an unbounded buffer.
    while (this.total > this.maxBytes) {
      const victim = [...this.kept.entries()].find(([, v]) => v.finishedAt !== undefined)?.[0] ?? (this.kept.keys().next().value as string);
      this.drop(victim);
      this.onEvict(victim);
    }
  }

  finished(requestId: string): void {
    const k = this.kept.get(requestId);
    if (k) k.finishedAt = Date.now();
  }

  /** Messages after lastSeq, in order. */
  since(requestId: string, lastSeq: number): T[] {
    return (this.kept.get(requestId)?.messages ?? []).filter((m) => m.seq > lastSeq).map((m) => m.msg);
  }

  has(requestId: string): boolean {
    return this.kept.has(requestId);
  }

  isFinished(requestId: string): boolean {
    return this.kept.get(requestId)?.finishedAt !== undefined;
  }

  drop(requestId: string): void {
    const k = this.kept.get(requestId);
    if (!k) return;
    this.total -= k.bytes;
    this.kept.delete(requestId);
  }

  /** Drops finished requests older than `olderThanMs` (finished before now - olderThanMs). */
  dropFinished(olderThanMs: number): void {
    const limit = Date.now() - olderThanMs;
    for (const [id, k] of this.kept) if (k.finishedAt !== undefined && k.finishedAt <= limit) this.drop(id);
  }

  ids(): string[] {
    return [...this.kept.keys()];
  }

  get bytes(): number {
    return this.total;
  }

  get size(): number {
    return this.kept.size;
  }
}
