// Builds the renderer on its own (for the browser console and the e2e suite): out/renderer, with
// relative asset paths so the same files load from file:// in Electron and over http in the console.
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));

export default defineConfig({
  root: here('./src/renderer'),
  base: './',
  plugins: [react()],
  build: {
    outDir: here('./out/renderer'),
    emptyOutDir: true,
    target: 'chrome120',
    sourcemap: true,
    // The console's CSP forbids inline scripts; keep everything in files.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 1500,
  },
});
