// A small GGUF file as the format's specification lays it out (ggml's docs/gguf.md, version 3): the magic,
// the version, the tensor and key counts, each key with its typed value, each tensor's name, shape, type
// and offset, then the tensor data aligned to general.alignment (32 when absent). The header is what our
// fit estimate reads (src/core/fit/gguf-facts.ts, through @huggingface/gguf), so suites that need a model's
// real header do not depend on a model file from outside the repository.

/** A key's value: a string, a whole number (written as uint32), a fraction (float32) or a boolean. */
export type GgufValue = string | number | boolean;

export interface GgufTensor {
  name: string;
  /** Dimensions, innermost first (as GGUF stores them). */
  shape: number[];
}

const ALIGNMENT = 32;
/** GGUF value types (gguf_type). */
const UINT32 = 4;
const FLOAT32 = 6;
const BOOL = 7;
const STRING = 8;
/** ggml_type F32: 4 bytes an element. */
const GGML_F32 = 0;

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
}

function u64(n: number | bigint): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt(n));
  return b;
}

function str(s: string): Buffer {
  const bytes = Buffer.from(s, 'utf8');
  return Buffer.concat([u64(bytes.length), bytes]);
}

function value(v: GgufValue): Buffer {
  if (typeof v === 'string') return Buffer.concat([u32(STRING), str(v)]);
  if (typeof v === 'boolean') return Buffer.concat([u32(BOOL), Buffer.from([v ? 1 : 0])]);
  if (Number.isInteger(v) && v >= 0 && v <= 0xffffffff) return Buffer.concat([u32(UINT32), u32(v)]);
  const f = Buffer.alloc(4);
  f.writeFloatLE(v);
  return Buffer.concat([u32(FLOAT32), f]);
}

const pad = (n: number): number => (ALIGNMENT - (n % ALIGNMENT)) % ALIGNMENT;

/** A GGUF v3 file with these keys and F32 tensors (their data zeros). */
export function ggufFile(metadata: Record<string, GgufValue>, tensors: GgufTensor[]): Buffer {
  const parts: Buffer[] = [Buffer.from('GGUF'), u32(3), u64(tensors.length), u64(Object.keys(metadata).length)];
  for (const [k, v] of Object.entries(metadata)) parts.push(str(k), value(v));
  let offset = 0;
  const sizes: number[] = [];
  for (const t of tensors) {
    parts.push(str(t.name), u32(t.shape.length), ...t.shape.map((d) => u64(d)), u32(GGML_F32), u64(offset));
    const size = t.shape.reduce((a, d) => a * d, 1) * 4;
    sizes.push(size);
    offset += size + pad(size);
  }
  const header = Buffer.concat(parts);
  const data = sizes.map((s) => Buffer.alloc(s + pad(s)));
  return Buffer.concat([header, Buffer.alloc(pad(header.length)), ...data]);
}

/** A tiny llama: two blocks, 64 wide, 4 heads, a 512-token context: what a real small GGUF's header says. */
export function tinyLlamaGguf(): Buffer {
  const embd = 64;
  const vocab = 32;
  const tensors: GgufTensor[] = [
    { name: 'token_embd.weight', shape: [embd, vocab] },
    { name: 'output_norm.weight', shape: [embd] },
    ...[0, 1].flatMap((i) => ['attn_q', 'attn_k', 'attn_v', 'attn_output'].map((n) => ({ name: `blk.${i}.${n}.weight`, shape: [embd, embd] }))),
  ];
  return ggufFile(
    {
      'general.architecture': 'llama',
      'general.name': 'swan-test-tiny-llama',
      'llama.context_length': 512,
      'llama.embedding_length': embd,
      'llama.block_count': 2,
      'llama.feed_forward_length': 128,
      'llama.attention.head_count': 4,
      'llama.attention.head_count_kv': 4,
      'llama.attention.layer_norm_rms_epsilon': 0.00001,
      'general.file_type': 0,
    },
    tensors,
  );
}
