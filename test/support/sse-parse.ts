// Feeds an SSE body, read by read, to the engine client's parser (EngineStreamParser) the way the client
// feeds it from the socket: every read as it comes, close() once at the end (with the read error, if any).
import { EngineStreamParser, type ParseStreamOptions } from '../../src/core/engine-client/sse';
import type { EngineStreamEvent } from '../../src/core/engine-client/types';

export async function parseSse(reads: AsyncIterable<Uint8Array>, opts: ParseStreamOptions = {}): Promise<EngineStreamEvent[]> {
  const p = new EngineStreamParser(opts);
  const out: EngineStreamEvent[] = [];
  const take = (): void => {
    out.push(...p.queue);
    p.queue.length = 0;
  };
  try {
    for await (const bytes of reads) {
      p.feed(bytes);
      take();
      if (p.overflow) break;
    }
    p.close();
  } catch (e) {
    p.close(true, e);
  }
  take();
  return out;
}
