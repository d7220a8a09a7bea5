// What a request was, in the owner's words (the request list, a request's detail).
import type { RequestPurpose, RequestView } from '../../shared/types';

const PURPOSE: Record<RequestPurpose, string> = {
  hub: 'Swan network request',
  gateway: 'Your app, through the local gateway',
  try: 'Your test prompt ("Try it")',
  warmup: 'Warmup (the agent loading the model)',
  'ollama-load': 'Warmup (Ollama loading the model)',
  verify: 'Verification asked by the hub',
  benchmark: 'Benchmark asked by the hub',
  health: 'Health check',
  'ollama-pull': 'Model download (Ollama)',
  'ollama-unload': 'Freeing the GPU (Ollama unloading the model)',
};

export function purposeOf(r: Pick<RequestView, 'purpose' | 'source'>): string {
  if (r.purpose) return PURPOSE[r.purpose];
  return r.source === 'hub' ? PURPOSE.hub : 'Local (your app, a test prompt or the agent itself)';
}
