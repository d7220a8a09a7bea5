// `node --import ./register.mjs out/main/index.js`: resolves 'electron' to the stand-in beside this file,
// for `import` (the bundle) and for `require` (CommonJS packages such as electron-updater).
import Module, { register } from 'node:module';
import { fileURLToPath } from 'node:url';

register('./hooks.mjs', import.meta.url);

const fake = fileURLToPath(new URL('./electron.mjs', import.meta.url));
const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  return request === 'electron' ? fake : resolveFilename.call(this, request, ...rest);
};
