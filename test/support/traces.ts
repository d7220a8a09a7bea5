// The real engine SSE traces in test/fixtures/engine-traces: where they are, their bytes, split on event
// boundaries, and a minimal independent summary (text + usage) the test engine uses for non-stream replies.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (this file lives in test/support). */
export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The in-repo traces folder (test/fixtures/engine-traces; FROM.md says where it was copied from). */
export function tracesDir(): string {
  return path.join(repoRoot, 'test', 'fixtures', 'engine-traces');
}

/** Every *.sse trace file name, sorted. */
export function listTraces(): string[] {
  return fs
    .readdirSync(tracesDir())
    .filter((f) => f.endsWith('.sse'))
    .sort();
}

const cache = new Map<string, Buffer>();

/** The raw bytes of a trace (or any file in the traces folder, e.g. vllm-models.json). */
export function readTrace(name: string): Buffer {
  let buf = cache.get(name);
  if (!buf) {
    buf = fs.readFileSync(path.join(tracesDir(), path.basename(name)));
    cache.set(name, buf);
  }
  return buf;
}

/**
 * Split SSE bytes after each blank line (LF, CRLF or CR line ends). Concatenating the parts gives the
 * input back byte for byte; a tail without a closing blank line is the last part.
 */
export function splitEvents(buf: Buffer): Buffer[] {
  const parts: Buffer[] = [];
  let start = 0;
  let lineStart = 0;
  for (let i = 0; i < buf.length; i++) {
    const b = buf[i];
    if (b !== 0x0a && b !== 0x0d) continue;
    const emptyLine = i === lineStart;
    if (b === 0x0d && buf[i + 1] === 0x0a) i++;
    lineStart = i + 1;
    if (emptyLine) {
      parts.push(buf.subarray(start, i + 1));
      start = i + 1;
    }
  }
  if (start < buf.length) parts.push(buf.subarray(start));
  return parts;
}

export interface TraceSummary {
  text: string;
  reasoning: string;
  finishReason?: string;
  /** Last non-zero usage object seen in the trace. */
  usage?: { prompt_tokens: number; completion_tokens: number };
  model?: string;
}

/** A plain reading of a trace, independent of src/core, for building non-stream replies. */
export function summarizeTrace(name: string): TraceSummary {
  const out: TraceSummary = { text: '', reasoning: '' };
  for (const line of readTrace(name).toString('utf8').split(/\r?\n/)) {
    if (!line.startsWith('data:')) continue;
    const payload = line.slice(line.startsWith('data: ') ? 6 : 5);
    if (payload === '[DONE]') continue;
    let obj: Record<string, unknown>;
    try {
      obj = JSON.parse(payload) as Record<string, unknown>;
    } catch {
      continue;
    }
    if (typeof obj.model === 'string' && obj.model) out.model = obj.model;
    const usage = obj.usage as { prompt_tokens?: number; completion_tokens?: number } | null | undefined;
    if (usage && (usage.prompt_tokens || usage.completion_tokens)) {
      out.usage = { prompt_tokens: usage.prompt_tokens ?? 0, completion_tokens: usage.completion_tokens ?? 0 };
    }
    const choice = (obj.choices as Record<string, unknown>[] | undefined)?.[0];
    if (!choice) continue;
    const delta = (choice.delta ?? {}) as Record<string, unknown>;
    if (typeof choice.text === 'string') out.text += choice.text;
    if (typeof delta.content === 'string') out.text += delta.content;
    if (typeof delta.reasoning_content === 'string') out.reasoning += delta.reasoning_content;
    else if (typeof delta.reasoning === 'string') out.reasoning += delta.reasoning;
    if (typeof choice.finish_reason === 'string' && choice.finish_reason) out.finishReason = choice.finish_reason;
  }
  return out;
}

/** The text of the test engine's generate mode for n tokens: "tok0 tok1 … tok{n-1}". */
export function generatedText(n: number): string {
  return Array.from({ length: n }, (_, i) => `tok${i}`).join(' ');
}
