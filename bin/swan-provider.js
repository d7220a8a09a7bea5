#!/usr/bin/env node
// Entry of the `swan-provider` command: runs the TypeScript CLI through tsx's loader,
// so `npx swan-provider --help` works right after `npm install` with no build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
await main(process.argv);
