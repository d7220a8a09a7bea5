// `node --import ./register.mjs out/main/index.js`: resolves 'electron' to the stand-in beside this file.
import { register } from 'node:module';

register('./hooks.mjs', import.meta.url);
