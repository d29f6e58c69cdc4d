// Where cardboard keeps its files. Imports nothing of cardboard's: the entry point reads the cache directory
// before any other module loads (the compile cache, src/compile-cache.ts).
import { homedir } from 'node:os';
import { join } from 'node:path';

type Env = Record<string, string | undefined>;

/** The config directory: CARDBOARD_CONFIG_DIR, else $XDG_CONFIG_HOME/cardboard, else ~/.config/cardboard (%APPDATA% on Windows). */
export function configDir(env: Env): string {
  if (env.CARDBOARD_CONFIG_DIR) return env.CARDBOARD_CONFIG_DIR;
  if (env.XDG_CONFIG_HOME) return join(env.XDG_CONFIG_HOME, 'cardboard');
  if (process.platform === 'win32' && env.APPDATA) return join(env.APPDATA, 'cardboard');
  return join(homedir(), '.config', 'cardboard');
}

/**
 * The cache directory, apart from the config as gh keeps it (a CI run with only CARDBOARD_* variables writes
 * nothing under the config directory): CARDBOARD_CACHE_DIR, else $XDG_CACHE_HOME/cardboard, else
 * ~/.cache/cardboard (%LOCALAPPDATA%\\cardboard\\cache on Windows).
 */
export function cacheDir(env: Env): string {
  if (env.CARDBOARD_CACHE_DIR) return env.CARDBOARD_CACHE_DIR;
  if (env.XDG_CACHE_HOME) return join(env.XDG_CACHE_HOME, 'cardboard');
  if (process.platform === 'win32' && env.LOCALAPPDATA) return join(env.LOCALAPPDATA, 'cardboard', 'cache');
  return join(homedir(), '.cache', 'cardboard');
}
