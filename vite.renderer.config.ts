// Builds the renderer on its own (for the browser console and the e2e suite): out/renderer, with
// relative asset paths so the same files load from file:// in Electron and over http in the console.
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';
import { withCspMeta } from './src/shared/csp';

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));

/** The built index.html carries the one CSP (src/shared/csp.ts) as a <meta> tag. */
function cspMeta(): Plugin {
  let mode: 'build' | 'serve' = 'build';
  return {
    name: 'swan-csp-meta',
    configResolved: (c) => void (mode = c.command),
    transformIndexHtml: (html) => withCspMeta(html, mode),
  };
}

export default defineConfig({
  root: here('./src/renderer'),
  base: './',
  plugins: [react(), cspMeta()],
  build: {
    outDir: here('./out/renderer'),
    emptyOutDir: true,
    target: 'chrome120',
    // No source maps in what the console serves or the app ships (they would publish the sources).
    sourcemap: false,
    // The console's CSP forbids inline scripts; keep everything in files.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 1500,
  },
});
