// Preloaded with `node --import` by startup.test.ts: appends the URL of every module the run resolves through
// the ES module loader (cardboard's modules, packages imported as ES modules) to $LOADED_MODULES_OUT, one a
// line. It observes the real entry point without adding anything to cardboard itself.
import { register } from 'node:module';

register(
  `data:text/javascript,${encodeURIComponent(`
import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  appendFileSync(${JSON.stringify(process.env.LOADED_MODULES_OUT)}, result.url + '\\n');
  return result;
}`)}`,
);
