// Node's module compile cache (`module.enableCompileCache`, Node >= 22.8): V8's compiled code of the modules a
// run loads (cardboard's and commander's) is kept on disk and reused by the next run, so a start-up such as
// `cardboard --help` parses and compiles little. Node 20 has no such cache: there this does nothing.
import { existsSync } from 'node:fs';
import module from 'node:module';
import { join } from 'node:path';
import { cacheDir } from './config/dirs.js';
import { isPrivateDir, makePrivateDir } from './private-file.js';

/** What Node's `enableCompileCache` answers (its `module.constants.compileCacheStatus.ENABLED` is 1). */
interface CompileCacheResult {
  status: number;
  directory?: string;
}

const ENABLED = 1;

/**
 * Turn on the compile cache in `<cache dir>/compile-cache` (src/config/dirs.ts), made owner-only if absent
 * (makePrivateDir). The directory must be private (isPrivateDir): whoever can write into it chooses the code
 * V8 loads, so Node's default place, a shared directory under the system's temporary one, would not do.
 * Resolves to the directory, or undefined when the cache is off: Node 20, NODE_DISABLE_COMPILE_CACHE=1, a
 * directory that cannot be made (read-only, no home) or that others may write into. A cache that cannot be
 * had is no error: the run only starts slower.
 */
export async function enableCompileCache(env: Readonly<Record<string, string | undefined>>): Promise<string | undefined> {
  const enable = (module as { enableCompileCache?: (dir: string) => CompileCacheResult }).enableCompileCache;
  if (typeof enable !== 'function') return undefined;
  try {
    const dir = join(cacheDir(env), 'compile-cache');
    if (!existsSync(dir)) makePrivateDir(dir);
    if (!isPrivateDir(dir)) return undefined;
    const result = enable(dir);
    return result.status === ENABLED ? result.directory : undefined;
  } catch {
    return undefined;
  }
}
