/**
 * undici, loaded on first use: its modules are large to load and to hold, so the --help path never pays for
 * them; later calls get the module Node's loader already holds. The V8 settings that keep its WebAssembly
 * parser small are made by the entry point (src/tuning.ts).
 */
export function loadUndici(): Promise<typeof import('undici')> {
  return import('undici');
}
