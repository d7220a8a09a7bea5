// electron-vite: builds the desktop app into out/ (main, preload, renderer). `npm run build`, `npm run dev`.
import { resolve } from 'node:path';
import { defineConfig } from 'electron-vite';
import rendererConfig from './vite.renderer.config';

export default defineConfig({
  main: {
    build: {
      // Node packages stay in node_modules (better-sqlite3 is native and must be rebuilt for Electron,
      // not bundled); electron-builder ships them, unpacking the .node file from app.asar.
      externalizeDeps: { include: ['better-sqlite3'] },
      lib: { entry: resolve('src/main/index.ts'), formats: ['es'] },
      rolldownOptions: { output: { entryFileNames: '[name].js' } },
      sourcemap: true,
    },
  },
  preload: {
    build: {
      // A sandboxed preload cannot load modules: one self-contained CommonJS file, only `electron` outside.
      externalizeDeps: false,
      lib: { entry: resolve('src/preload/index.ts'), formats: ['cjs'] },
      rolldownOptions: { output: { entryFileNames: '[name].cjs', codeSplitting: false } },
    },
  },
  // The same renderer build the browser console serves (vite.renderer.config.ts, owned with the UI).
  renderer: rendererConfig,
});
