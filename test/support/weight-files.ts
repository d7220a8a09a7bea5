// Weight files as their formats begin (only such files are ever fingerprinted, src/core/weights/locate.ts):
// safetensors' 8-byte little-endian header length and its JSON header, a GGUF's magic.

/** A safetensors file: an empty-metadata JSON header, then `body` as its data. */
export function safetensors(body: Buffer | string = ''): Buffer {
  const header = Buffer.from('{"__metadata__":{}}');
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(header.length));
  return Buffer.concat([len, header, Buffer.from(body)]);
}

/** A GGUF file: the magic, then `body`. */
export function gguf(body: Buffer | string = ''): Buffer {
  return Buffer.concat([Buffer.from('GGUF'), Buffer.from(body)]);
}
