let loading: Promise<typeof import('undici')> | undefined;

/**
 * undici, loaded on first use (it costs ~15 MB and 20 ms, so the --help path never pays for it). The V8
 * settings that keep its WebAssembly parser small are made by the entry point (src/tuning.ts).
 */
export function loadUndici(): Promise<typeof import('undici')> {
  loading ??= import('undici');
  return loading;
}
