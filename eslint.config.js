// Lint: TypeScript rules plus the layer rule — src/core and src/shared never import electron or react.
import tseslint from 'typescript-eslint';

const layerRule = {
  'no-restricted-imports': [
    'error',
    {
      paths: [
        { name: 'electron', message: 'src/core and src/shared must not import electron: keep the agent runnable in plain Node.' },
        { name: 'react', message: 'src/core and src/shared must not import react.' },
        { name: 'react-dom', message: 'src/core and src/shared must not import react-dom.' },
      ],
      patterns: [
        { group: ['electron/*', 'react/*', 'react-dom/*'], message: 'No electron/react in src/core or src/shared.' },
        { group: ['**/renderer/**', '**/main/**', '**/preload/**'], message: 'src/core must not reach into the UI layers.' },
      ],
    },
  ],
};

export default tseslint.config(
  { ignores: ['node_modules/**', 'out/**', 'dist/**', 'release/**', 'test-results/**', 'playwright-report/**', 'e2e/artifacts/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
    },
  },
  { files: ['src/core/**/*.ts', 'src/shared/**/*.ts'], rules: layerRule },
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
