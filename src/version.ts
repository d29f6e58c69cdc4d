import { readFileSync } from 'node:fs';

/** The package version, read once from package.json (one small file read, no JSON import cost). */
export const VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

/**
 * The flags that print the version: the root's `--version` option (program.ts) and the entry point's fast
 * path (bin/cardboard.js), which answers them alone before commander loads.
 */
export const VERSION_FLAGS: readonly string[] = ['-V', '--version'];
