// Retention of what each hub stream sent (resume-v1): every stream_chunk / stream_end of a request is
// kept, by seq, until the request has finished and the hub cannot ask for it any more. Bounded by
// total bytes (oldest request evicted first) and by a TTL.
// The messages are kept as UTF-8 bytes in one buffer per request (off the JS heap), with their seqs and
// end offsets in plain number arrays: no JS object per kept message, so the garbage collector has
// nothing of the buffer to copy or scan (it held tens of thousands of strings at 64 streams, doubling
// the agent's scavenge pauses under the bench's 64-stream load).

import { monoMs } from '../base/clock';

/** How a kept message is written to bytes and read back (the relay keeps each message already serialised). */
export interface RetentionCodec<T> {
  /** What is kept of the message: its text, or a shorter form (`short`: true) that read() expands. */
  text(msg: T): string;
  short?(msg: T): string | undefined;
  read(text: string, seq: number, bytes: number, requestId: string, short: boolean): T;
}

interface Kept {
  buf: Buffer;
  used: number;
  /** Per kept message, in order: its seq (negative: kept in its short form) and the offset its bytes end at. */
  seqs: number[];
  ends: number[];
  /** The sizes the caller gave, summed (what the cap counts). */
  bytes: number;
  /** When it finished, on the monotonic clock (an age only). */
  finishedAt?: number;
}

const EMPTY = Buffer.alloc(0);
// A stream of a few hundred chunks fits without growing; finished() gives the rest back.
const FIRST_BUFFER = 16 * 1024;
/**
 * Working buffers of finished requests, for the next ones. A Buffer's memory is freed only when the
 * garbage collector collects it, and one that lived through a stream has been promoted to old space,
 * which is collected rarely: without reuse every request left 16 KB of garbage outside the heap until
 * then (the agent's external memory grew by tens of MB at 64 streams).
 */
const SPARE_BUFFERS = 128;

export class Retention<T> {
  private readonly kept = new Map<string, Kept>();
  private total = 0;
  private readonly spare: Buffer[] = [];

  constructor(
    private readonly maxBytes: number,
    /** Called with the ids evicted to stay under maxBytes (their engine requests should be cancelled). */
    private readonly onEvict: (requestId: string) => void,
    private readonly codec: RetentionCodec<T>,
  ) {}

  add(requestId: string, seq: number, msg: T, bytes: number): void {
    let k = this.kept.get(requestId);
    if (!k) {
      k = { buf: EMPTY, used: 0, seqs: [], ends: [], bytes: 0 };
      this.kept.set(requestId, k);
    }
    const short = seq > 0 ? this.codec.short?.(msg) : undefined;
    const text = short ?? this.codec.text(msg);
    // At most 3 bytes per UTF-16 unit; the buffer doubles, so copies stay linear in what is kept.
    const need = k.used + text.length * 3;
    if (need > k.buf.length) {
      const size = Math.max(need, k.buf.length * 2, FIRST_BUFFER);
      const grown = size === FIRST_BUFFER && this.spare.length > 0 ? this.spare.pop()! : Buffer.allocUnsafeSlow(size);
      k.buf.copy(grown, 0, 0, k.used);
      k.buf = grown;
    }
    k.used += k.buf.write(text, k.used);
    k.seqs.push(short === undefined ? seq : -seq);
    k.ends.push(k.used);
    k.bytes += bytes;
    this.total += bytes;
    // Past the cap the oldest request goes (cancelled by onEvict), finished ones first; a single
    // request larger than the whole cap is itself dropped and cancelled, never an unbounded buffer.
    while (this.total > this.maxBytes) {
      const victim = [...this.kept.entries()].find(([, v]) => v.finishedAt !== undefined)?.[0] ?? (this.kept.keys().next().value as string);
      this.drop(victim);
      this.onEvict(victim);
    }
  }

  /** Marks a request finished (nothing more is added) and gives back its buffer's unused tail. */
  finished(requestId: string): void {
    const k = this.kept.get(requestId);
    if (!k) return;
    k.finishedAt = monoMs(); // an age, on the monotonic clock: a wall-clock step drops nothing early
    if (k.buf.length > k.used) {
      const exact = Buffer.allocUnsafeSlow(k.used);
      k.buf.copy(exact, 0, 0, k.used);
      this.reuse(k.buf);
      k.buf = exact;
    }
  }

  /** A working buffer nothing refers to any more (since() hands out copies) goes back for the next request. */
  private reuse(buf: Buffer): void {
    if (buf.length === FIRST_BUFFER && this.spare.length < SPARE_BUFFERS) this.spare.push(buf);
  }

  /** Messages after lastSeq, in order. */
  since(requestId: string, lastSeq: number): T[] {
    const k = this.kept.get(requestId);
    if (!k) return [];
    const out: T[] = [];
    for (let i = 0; i < k.seqs.length; i++) {
      const signed = k.seqs[i]!;
      const seq = Math.abs(signed);
      if (seq <= lastSeq) continue;
      const start = i === 0 ? 0 : k.ends[i - 1]!;
      const end = k.ends[i]!;
      out.push(this.codec.read(k.buf.toString('utf8', start, end), seq, end - start, requestId, signed < 0));
    }
    return out;
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
    if (k.finishedAt === undefined) this.reuse(k.buf);
  }

  /** Drops finished requests older than `olderThanMs` (finished before now - olderThanMs). */
  dropFinished(olderThanMs: number): void {
    const limit = monoMs() - olderThanMs;
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
