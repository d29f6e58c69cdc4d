import { setFlagsFromString } from 'node:v8';

let loading: Promise<typeof import('undici')> | undefined;

/**
 * undici, loaded on first use (it costs ~15 MB and 20 ms, so the --help path never pays for it).
 *
 * Before its first connection compiles llhttp (WebAssembly), V8 is told to keep that code in the baseline
 * tier (Liftoff). Measured on Node 20.20: the optimising compile of llhttp raises the peak RSS of every
 * command that makes a request from ~64 MB to ~100 MB (card list --all of 100,000 cards: 82 MB instead of 110);
 * side by side, `card list --all` of 100,000 cards and a 20,000-row import ran at the same speed either way.
 * The flag only affects WebAssembly compiled from now on, and cardboard compiles none of its own.
 */
export function loadUndici(): Promise<typeof import('undici')> {
  loading ??= (() => {
    setFlagsFromString('--liftoff-only');
    return import('undici');
  })();
  return loading;
}
