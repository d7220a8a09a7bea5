// What a GGUF file's header says about the memory it needs, read with @huggingface/gguf (only the header is
// read, never the tensors). The weights figure is exact: the bytes of each tensor are the span from its
// offset to the next one (the last to the end of the file), which is what llama.cpp maps or uploads as its
// "model buffer". The KV shape comes from the architecture's own keys (`<arch>.block_count`,
// `<arch>.attention.head_count_kv`, `<arch>.attention.key_length`…), as llama.cpp reads them.
import fs from 'node:fs';
import { gguf } from '@huggingface/gguf';
import type { KvShape, WeightsFigure } from './estimate';

export interface GgufFacts {
  weights: WeightsFigure;
  shape?: KvShape;
  architecture?: string;
  name?: string;
  /** llama.cpp's file type (general.file_type: 1 = F16, 15 = Q4_K_M…) when the header says. */
  fileType?: number;
}

/** A GGUF's header is a few MB at most even with a big vocabulary; a file smaller than this is not a model. */
const MIN_GGUF_BYTES = 32;

function num(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'bigint') return Number(v);
  return undefined;
}

/** A per-layer array (some models vary KV heads by layer) counts as its largest: the cache is sized for it. */
function numOrMax(v: unknown): number | undefined {
  if (Array.isArray(v)) {
    const ns = v.map(num).filter((n): n is number => n !== undefined);
    return ns.length ? Math.max(...ns) : undefined;
  }
  return num(v);
}

/** The summed tensor spans of a parsed header: exact bytes of the weights. */
export function tensorBytes(offsets: bigint[], dataOffset: bigint, fileSize: number): number {
  const sorted = [...offsets].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  if (sorted.length === 0) return 0;
  const end = BigInt(fileSize) - dataOffset;
  // Spans between offsets include each tensor's alignment padding, as the loaded buffer does.
  return Number(end - sorted[0]!);
}

/** Reads the header of a local GGUF file. Throws on a file that is not a readable GGUF. */
export async function readGgufFacts(file: string): Promise<GgufFacts> {
  const st = fs.statSync(file);
  if (!st.isFile() || st.size < MIN_GGUF_BYTES) throw new Error(`${file} is not a GGUF model file`);
  return ggufFactsOf(file, st.size, true);
}

/**
 * Reads the header of a GGUF at a URL without fetching the file (the library asks for byte ranges of its
 * start), `size` being the file's size as the repository lists it.
 */
export function remoteGgufFacts(url: string, size: number): Promise<GgufFacts> {
  return ggufFactsOf(url, size, false);
}

async function ggufFactsOf(uri: string, size: number, local: boolean): Promise<GgufFacts> {
  const r = await gguf(uri, { allowLocalFile: local, computeParametersCount: true });
  const st = { size };
  const md = r.metadata as Record<string, unknown>;
  const arch = typeof md['general.architecture'] === 'string' ? (md['general.architecture'] as string) : undefined;
  const bytes = tensorBytes(
    r.tensorInfos.map((t) => t.offset),
    r.tensorDataOffset,
    st.size,
  );
  const weights: WeightsFigure = { bytes, source: 'gguf', exact: true, ...(r.parameterCount > 0 ? { parameters: r.parameterCount } : {}) };
  const out: GgufFacts = { weights, ...(arch ? { architecture: arch } : {}) };
  if (typeof md['general.name'] === 'string') out.name = md['general.name'];
  const ft = num(md['general.file_type']);
  if (ft !== undefined) out.fileType = ft;
  if (arch) {
    const k = (key: string) => md[`${arch}.${key}`];
    const layers = num(k('block_count'));
    const heads = numOrMax(k('attention.head_count'));
    const kvHeads = numOrMax(k('attention.head_count_kv')) ?? heads;
    const embd = num(k('embedding_length'));
    const headDim = embd !== undefined && heads ? embd / heads : undefined;
    const headDimK = num(k('attention.key_length')) ?? headDim;
    const headDimV = num(k('attention.value_length')) ?? headDim;
    const contextTrain = num(k('context_length'));
    if (layers !== undefined && kvHeads !== undefined && headDimK !== undefined && headDimV !== undefined) {
      out.shape = { layers, kvHeads, headDimK, headDimV, ...(contextTrain ? { contextTrain } : {}) };
    }
  }
  return out;
}
