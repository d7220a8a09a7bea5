// What a model does, from its models.json `category` (the words the Go provider reads): which operation a
// hub request for it is, and whether it answers a chat completion (the deep health check asks only those).

/** The OpenAI path after /v1/ a request goes to ('completions' is the legacy text completion). */
export type Operation = 'chat/completions' | 'completions' | 'embeddings' | 'images/generations' | 'audio/transcriptions';

/** The operation a models.json category implies, when it says one (the same words Go reads). */
export function categoryOperation(category: string | undefined): Operation | undefined {
  switch ((category ?? '').trim().toLowerCase()) {
    case 'image':
    case 'text-to-image':
    case 'image-generation':
      return 'images/generations';
    case 'embedding':
    case 'embeddings':
    case 'text-embedding':
      return 'embeddings';
    case 'audio':
    case 'speech-to-text':
    case 'transcription':
      return 'audio/transcriptions';
    default:
      return undefined;
  }
}

/** Whether a model of this category answers a chat completion (the deep health probe asks only those). */
export function chatCompatible(category: string | undefined): boolean {
  return ['', 'text-generation', 'llm', 'chat', 'multimodal'].includes((category ?? '').trim().toLowerCase());
}

