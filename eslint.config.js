// Lint: TypeScript rules; the layer rule (src/core and src/shared never import electron, react or a UI
// layer); and inside src/core the import order of its folders (scripts/core-order.mjs): a folder imports
// only the folders before it, so an import against the order fails lint naming both folders.
import tseslint from 'typescript-eslint';
import { CORE_LAYERS, foldersAfter, layerOf } from './scripts/core-order.mjs';

const layerPaths = [
  { name: 'electron', message: 'src/core and src/shared must not import electron: keep the agent runnable in plain Node.' },
  { name: 'react', message: 'src/core and src/shared must not import react.' },
  { name: 'react-dom', message: 'src/core and src/shared must not import react-dom.' },
];
const layerPatterns = [
  { group: ['electron/*', 'react/*', 'react-dom/*'], message: 'No electron/react in src/core or src/shared.' },
  { group: ['**/renderer/**', '**/main/**', '**/preload/**'], message: 'src/core must not reach into the UI layers.' },
];
const layerRule = { 'no-restricted-imports': ['error', { paths: layerPaths, patterns: layerPatterns }] };

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

// One block per folder of src/core. Flat-config blocks that set the same rule for the same file replace
// its options rather than merge them, so each block repeats the layer rule's paths and patterns
// (test/core/import-order.test.ts checks that electron is still refused inside a folder).
const coreOrderBlocks = CORE_LAYERS.flat()
  .filter((node) => node.endsWith('/'))
  .map((folder) => ({
    files: [`src/core/${folder}**/*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: layerPaths,
          patterns: [
            ...layerPatterns,
            ...foldersAfter(folder).map((later) => ({
              // From inside src/core/<folder>/, "../<later>/…" (one "../" a level) is that other folder.
              regex: `^(\\.\\./)+${escape(later.slice(0, -1))}(/|$)`,
              message: `src/core/${folder} (layer ${layerOf(folder)}) may not import src/core/${later} (layer ${layerOf(later)}): a folder imports only the folders before it (scripts/core-order.mjs).`,
            })),
          ],
        },
      ],
    },
  }));

export default tseslint.config(
  { ignores: ['node_modules/**', 'out/**', 'dist/**', 'release/**', 'test-results/**', 'playwright-report/**', 'e2e/artifacts/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
    },
  },
  {
    // Type-aware rules for the product: the design relies on every rejection reaching a boundary that
    // logs it (a process guard, a bridge verb's error mapping), so a promise is awaited, returned, or
    // handed off with `void` on purpose; and an async function is never passed where a void callback is
    // expected (an event listener's rejection would escape every boundary).
    files: ['src/**/*.{ts,tsx}'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
  { files: ['src/core/**/*.ts', 'src/shared/**/*.ts'], rules: layerRule },
  ...coreOrderBlocks,
  {
    // IPC has one door on each side: src/main/ipc.ts (every channel validated and guarded) and src/preload/index.ts
    // (the typed bridge). A handler registered anywhere else would skip the guard.
    files: ['src/main/**/*.ts', 'src/preload/**/*.ts'],
    ignores: ['src/main/ipc.ts', 'src/preload/index.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: 'electron',
              importNames: ['ipcMain', 'ipcRenderer'],
              message: 'IPC goes through src/main/ipc.ts and src/preload/index.ts only (validated, guarded channels).',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/renderer/**/*.{ts,tsx}'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['**/core/**', 'electron', 'node:*'], message: 'The renderer talks to the agent only through the typed bridge.' }] },
      ],
    },
  },
);
