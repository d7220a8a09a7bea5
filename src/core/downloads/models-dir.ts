// Where downloaded models go: `<home>/models/<model_id>/` (the Go provider's ~/.swan/models layout, under this
// agent's home), or the folder SWAN_MODELS_DIR names (a bigger disk). The CLI's --models-dir wins over both.
import fs from 'node:fs';
import path from 'node:path';
import { homePath } from '../config/home-layout';
import { goModelDir } from '../weights/manifest';

export function modelsDirOf(home: string, env: NodeJS.ProcessEnv = process.env, flag?: string): string {
  const chosen = flag ?? env.SWAN_MODELS_DIR;
  return chosen && chosen.trim() ? path.resolve(chosen.trim()) : homePath(home, 'modelFiles');
}

/**
 * The weights `models serve` uses for a model downloaded into the models folder, when no --weights names
 * them: llama.cpp serves one GGUF (the largest in the model's folder), vLLM and SGLang the folder itself.
 * Undefined when the folder holds nothing of the kind.
 */
export function downloadedWeights(modelsDir: string, modelId: string, backend: 'llamacpp' | 'vllm' | 'sglang'): string | undefined {
  const dir = goModelDir(modelsDir, modelId);
  if (!dir || !fs.existsSync(dir)) return undefined;
  if (backend !== 'llamacpp') return fs.existsSync(path.join(dir, 'config.json')) ? dir : undefined;
  let best: { file: string; size: number } | undefined;
  for (const name of fs.readdirSync(dir, { recursive: true }) as string[]) {
    if (!name.toLowerCase().endsWith('.gguf') || name.split(path.sep).some((p) => p.startsWith('.'))) continue;
    const file = path.join(dir, name);
    const size = fs.statSync(file).size;
    if (!best || size > best.size) best = { file, size };
  }
  return best?.file;
}
