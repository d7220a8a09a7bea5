// Where the built app's pieces are, relative to the main bundle (out/main/index.js), so the same code works
// from the project folder, from `electron .`, under Playwright and inside app.asar.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RendererLocation } from './ipc-guard';

const mainDir = path.dirname(fileURLToPath(import.meta.url));
const outDir = path.resolve(mainDir, '..');

export const appPaths = {
  preload: path.join(outDir, 'preload', 'index.cjs'),
  rendererIndex: path.join(outDir, 'renderer', 'index.html'),
  /** resources/ beside out/ (packed into app.asar by electron-builder). */
  resources: path.resolve(outDir, '..', 'resources'),
};

/**
 * The electron-vite dev server (`npm run dev` sets ELECTRON_RENDERER_URL), never in a packaged app;
 * otherwise the built index.html.
 */
export function rendererLocation(isPackaged: boolean, env: NodeJS.ProcessEnv = process.env): RendererLocation {
  const devUrl = env.ELECTRON_RENDERER_URL;
  if (!isPackaged && devUrl && /^https?:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d+)?\/?$/.test(devUrl)) {
    return { kind: 'dev', url: devUrl };
  }
  return { kind: 'file', indexFile: appPaths.rendererIndex };
}
