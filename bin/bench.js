#!/usr/bin/env node
// `npm run bench`: runs the TypeScript bench (bench/index.ts) through tsx's loader, as bin/swan-provider.js
// runs the CLI. Settings come from environment variables (see bench/settings.ts), e.g.
// `BENCH_QUICK=1 npm run bench` for a shorter run.
import { register } from 'tsx/esm/api';

register();
await import('../bench/index.ts');
