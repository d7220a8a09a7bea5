// What a model does, from its models.json `category` (the words the Go provider reads): which operation a
// hub request for it is, and whether it answers a chat completion (the deep health check asks only those).

/** The OpenAI path after /v1/ a request goes to ('completions' is the legacy text completion). */
export type Operation = 'chat/completions' | 'completions' | 'embeddings' | 'images/generations' | 'audio/transcriptions';

/** What a model does, in the Go node's category words. */
export type ModelCategory = 'text-generation' | 'multimodal' | 'embedding' | 'image' | 'audio' | 'rerank';

/** A models.json (or engine) category in one of the five words, or undefined when it says none of them. */
export function normalizeCategory(raw: string | undefined): ModelCategory | undefined {
  switch ((raw ?? '').trim().toLowerCase()) {
    case 'text-generation':
    case 'text':
    case 'llm':
    case 'chat':
      return 'text-generation';
    case 'multimodal':
    case 'vision':
    case 'vlm':
    case 'image-text-to-text':
      return 'multimodal';
    case 'embedding':
    case 'embeddings':
    case 'text-embedding':
      return 'embedding';
    case 'image':
    case 'text-to-image':
    case 'image-generation':
      return 'image';
    case 'audio':
    case 'speech-to-text':
    case 'transcription':
      return 'audio';
    case 'rerank':
    case 'reranking':
    case 'reranker':
      return 'rerank';
    default:
      return undefined;
  }
}

/** The operation a models.json category implies, when it says one (the same words Go reads). */
export function categoryOperation(category: string | undefined): Operation | undefined {
  const c = normalizeCategory(category);
  return c === 'image' ? 'images/generations' : c === 'embedding' ? 'embeddings' : c === 'audio' ? 'audio/transcriptions' : undefined;
}

/** Whether a model of this category answers a chat completion (the deep health probe asks only those): none said, or a chat word. */
export function chatCompatible(category: string | undefined): boolean {
  if ((category ?? '').trim() === '') return true;
  const c = normalizeCategory(category);
  return c === 'text-generation' || c === 'multimodal';
}
