// Where downloaded models go: `<home>/models/<model_id>/` (the Go provider's ~/.swan/models layout, under this
// agent's home), or the folder SWAN_MODELS_DIR names (a bigger disk). The CLI's --models-dir wins over both.
import path from 'node:path';
import { homePath } from '../config/home-layout';

export function modelsDirOf(home: string, env: NodeJS.ProcessEnv = process.env, flag?: string): string {
  const chosen = flag ?? env.SWAN_MODELS_DIR;
  return chosen && chosen.trim() ? path.resolve(chosen.trim()) : homePath(home, 'modelFiles');
}
