// chunkJson: the relay forwards the engine's own chunk bytes (model patched) instead of stringifying the
// parsed chunk again. Whatever the route, what the hub parses must equal the chunk object the old path
// stringified: every real trace, with and without the model rewrite, and the texts that must not be patched.
import { describe, expect, it } from 'vitest';
import { chunkJson } from '../../../src/core/engine-client/sse';
import { parseSse } from '../../support/sse-parse';
import type { EngineStreamEvent } from '../../../src/core/engine-client/types';
import { encodeOnce, encodeStreamChunk, out } from '../../../src/core/protocol/messages';
import { listTraces, readTrace } from '../../support/traces';

type Chunk = Extract<EngineStreamEvent, { type: 'chunk' }>;

async function chunksOf(sse: string): Promise<Chunk[]> {
  async function* body(): AsyncGenerator<Uint8Array> {
    yield new TextEncoder().encode(sse);
  }
  const out: Chunk[] = [];
  for (const ev of await parseSse(body())) if (ev.type === 'chunk') out.push(ev);
  return out;
}

const one = async (data: string): Promise<Chunk> => (await chunksOf(`data: ${data}\n\n`))[0]!;

describe('chunkJson', () => {
  it('is the engine text itself when the chunk is unchanged', async () => {
    const raw = '{"id":"x","model":"m", "choices":[{"index":0,"delta":{"content":"caf\\u00e9 1.0"}}]}';
    const ev = await one(raw);
    expect(chunkJson(ev)).toBe(raw);
  });

  it('patches only the top-level model value when the runner rewrote it', async () => {
    const ev = await one('{"id":"x","model":"/models/llama.gguf","choices":[{"delta":{"content":"\\"model\\":\\"/models/llama.gguf\\""}}]}');
    ev.data.model = 'llama-3';
    const text = chunkJson(ev);
    expect(text).toBe('{"id":"x","model":"llama-3","choices":[{"delta":{"content":"\\"model\\":\\"/models/llama.gguf\\""}}]}');
    expect(JSON.parse(text)).toEqual(ev.data);
  });

  it('accepts spaces around the colon (Python json.dumps)', async () => {
    const ev = await one('{"id": "x", "model": "a", "choices": []}');
    ev.data.model = 'b';
    expect(chunkJson(ev)).toBe('{"id": "x", "model": "b", "choices": []}');
  });

  it('stringifies when the text cannot be patched safely', async () => {
    // A second "model" key (nested), a value written with escapes JSON.stringify does not use, no model at all.
    for (const raw of ['{"model":"a","x":{"model":"a"},"choices":[]}', '{"model":"\\u0061","choices":[]}', '{"choices":[]}']) {
      const ev = await one(raw);
      ev.data.model = 'b';
      const text = chunkJson(ev);
      expect(text).toBe(JSON.stringify(ev.data));
      expect(JSON.parse(text).model).toBe('b');
    }
  });

  it('equals the stringified chunk for every chunk of every real trace, rewritten or not', async () => {
    let seen = 0;
    for (const name of listTraces()) {
      for (const ev of await chunksOf(readTrace(name).toString('utf8'))) {
        expect(JSON.parse(chunkJson(ev))).toEqual(ev.data);
        ev.data.model = 'the-id-clients-asked-for';
        expect(JSON.parse(chunkJson(ev))).toEqual(ev.data);
        seen++;
      }
    }
    expect(seen).toBeGreaterThan(50);
  });
});

describe('encodeStreamChunk', () => {
  it('writes what out.streamChunk + encodeOnce writes', () => {
    const chunk = { id: 'c', model: 'm', choices: [{ index: 0, delta: { content: 'hé "q"' } }] };
    const id = 'req-"1"';
    const fast = encodeStreamChunk(id, 7, JSON.stringify(chunk));
    const slow = encodeOnce(out.streamChunk(id, 7, chunk, false));
    const { chunk: kept, ...message } = fast;
    expect({ ...message, text: Buffer.from(fast.text).toString('utf8') }).toEqual(slow);
    expect(kept).toBe(JSON.stringify(chunk)); // what the resume buffer keeps of it
    expect(fast.bytes).toBe(Buffer.byteLength(slow.text));
  });
});
