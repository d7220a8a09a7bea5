// The app's own version, from package.json: bundlers (esbuild for the CLI, vite for the desktop app) inline
// it when they build, and tsx reads it when the sources run. One place to change, never a literal in code.
// The hub is told another number, the provider dialect this node speaks (HUB_DIALECT_VERSION,
// protocol/messages.ts; docs/decisions/cp-version.md).
import { version } from '../../../package.json';

export const APP_VERSION: string = version;
