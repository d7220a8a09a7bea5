// Loads the agent's code with V8's young generation held at its first size. Loading it (the bundle, zod,
// systeminformation, pino…) is one burst of allocation that makes V8 double new space from 2 to 16 MB before
// the agent can cap it (src/core/young-generation.ts), and those pages then stay resident. V8 reads
// --semi-space-growth-factor each time it would grow new space, and puts it back to 2 when it sets up a
// thread's heap (tsx's loader thread): so it is set again after `load` starts one (`hold()`).
// Used by bin/swan-provider.js and by the bench's A/B launchers (bench/ab.ts).
import v8 from 'node:v8';

function grow(on) {
  v8.setFlagsFromString(`--semi-space-growth-factor=${on ? 2 : 1}`);
}

/** Runs `load(hold)` with new space held, and lets it grow again after; `hold()` holds it again. */
export async function loadAgent(load) {
  grow(false);
  try {
    return await load(() => grow(false));
  } finally {
    grow(true);
  }
}
