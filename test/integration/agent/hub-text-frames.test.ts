// Stream chunks leave as UTF-8 bytes encoded once (protocol/messages.ts encodeStreamChunk); on the wire
// they must still be text frames carrying the same JSON, as every other message (HUB-PROTOCOL.md).
import { afterEach, describe, expect, it } from 'vitest';
import { chat, chunkText, readSse, registered, startStack, type Stack } from '../../support/stack';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

describe('hub frames', () => {
  it('sends every stream_chunk as a text frame of JSON', async () => {
    stack = await startStack();
    await registered(stack);
    const ws = stack.hub!.providers()[0]!.ws!;
    const frames: Array<{ binary: boolean; type: string }> = [];
    ws.on('message', (data: Buffer, isBinary: boolean) =>
      frames.push({ binary: isBinary, type: (JSON.parse(data.toString('utf8')) as { type: string }).type }),
    );
    const model = stack.engines[0]!.modelIds[0]!;
    const text = chunkText(await readSse(await chat(stack.hub!, { model, stream: true, messages: [{ role: 'user', content: 'hi' }] })));
    expect(text.length).toBeGreaterThan(0);
    const chunks = frames.filter((f) => f.type === 'stream_chunk');
    expect(chunks.length).toBeGreaterThan(1);
    expect(frames.filter((f) => f.binary)).toEqual([]);
  });
});
