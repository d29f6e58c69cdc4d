/**
 * undici, loaded on first use (it costs ~15 MB and 20 ms, so the --help path never pays for it); later calls
 * get the module Node's loader already holds. The V8 settings that keep its WebAssembly parser small are made
 * by the entry point (src/tuning.ts).
 */
export function loadUndici(): Promise<typeof import('undici')> {
  return import('undici');
}
