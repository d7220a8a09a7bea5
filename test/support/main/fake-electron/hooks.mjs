// Module resolve hook: 'electron' -> ./electron.mjs. Everything else resolves as usual.
export async function resolve(specifier, context, next) {
  if (specifier === 'electron') return { url: new URL('./electron.mjs', import.meta.url).href, shortCircuit: true, format: 'module' };
  return next(specifier, context);
}
