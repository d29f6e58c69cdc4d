import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { CardboardError } from '../errors.js';
import { fileError } from '../fs-errors.js';
import { makePrivateDir, tightenFile } from '../private-file.js';

/** One stored board: where it lives and its secrets (spec 2.4: API Key, POST URL, webhook signing key). */
export interface StoredBoard {
  id: string;
  baseUrl: string;
  token: string;
  signingKey?: string;
}

/** The config file: board aliases and which one is the default. */
export interface CardboardConfig {
  defaultBoard?: string;
  /** A null-prototype record: an alias is a user's string (`toString`, `__proto__`), never a key of Object.prototype. */
  boards: Record<string, StoredBoard>;
}

/** A config with no board; `boards` has a null prototype. */
export function emptyConfig(): CardboardConfig {
  return { boards: Object.create(null) as Record<string, StoredBoard> };
}

/** The board stored under `alias`, own keys only: `toString` or `constructor` is no stored board. */
export function storedBoard(config: CardboardConfig, alias: string): StoredBoard | undefined {
  return Object.hasOwn(config.boards, alias) ? config.boards[alias] : undefined;
}

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

/** The config file path: `<configDir>/config.json`. */
export function configPath(env: Env): string {
  return join(configDir(env), 'config.json');
}

function validate(raw: unknown, file: string): CardboardConfig {
  const bad = () => new CardboardError(`The config file ${file} is not a cardboard config.`, { hint: 'Fix or remove it, then run `cardboard board add`.' });
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw bad();
  const { defaultBoard, boards } = raw as Record<string, unknown>;
  if (boards !== undefined && (typeof boards !== 'object' || boards === null || Array.isArray(boards))) throw bad();
  const out = emptyConfig();
  if (typeof defaultBoard === 'string') out.defaultBoard = defaultBoard;
  for (const [alias, b] of Object.entries((boards ?? {}) as Record<string, unknown>)) {
    const board = b as Partial<StoredBoard> | null;
    if (!board || typeof board.id !== 'string' || typeof board.baseUrl !== 'string' || typeof board.token !== 'string') throw bad();
    const stored: StoredBoard = { id: board.id, baseUrl: board.baseUrl, token: board.token };
    if (typeof board.signingKey === 'string') stored.signingKey = board.signingKey;
    out.boards[alias] = stored;
  }
  return out;
}

/**
 * Read the config without creating anything: a CI job with only CARDBOARD_* variables has no
 * file and must not get one. Read with fs, not conf, which costs ~100 ms to import (PITFALLS).
 */
export function readConfig(env: Env): CardboardConfig {
  const file = configPath(env);
  if (!existsSync(file)) return emptyConfig();
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw configFileError(err, 'read the config file', file);
  }
  if (!text.trim()) return emptyConfig();
  try {
    return validate(JSON.parse(text), file);
  } catch (err) {
    if (err instanceof CardboardError) throw err;
    throw new CardboardError(`The config file ${file} is not valid JSON.`, { hint: 'Fix or remove it.', cause: err });
  }
}

/**
 * Create the config (or cache) directory owner-only (0700): conf would create it 0755 (PITFALLS). One that
 * exists already is left as it is: CARDBOARD_CONFIG_DIR may name a shared directory such as /tmp.
 */
export function ensurePrivateDir(dir: string): void {
  makePrivateDir(dir);
}

/**
 * A file-system error on the config directory or file as a UsageError naming the path and CARDBOARD_CONFIG_DIR
 * (a directory owned by another user, a path under a regular file, a read-only home); others as they are.
 */
function configFileError(err: unknown, action: string, path: string): unknown {
  const translated = fileError(err, {
    action,
    path,
    hint: 'Set CARDBOARD_CONFIG_DIR to a directory of your own (it holds tokens: created 0700, files 0600).',
  });
  if (translated !== err || err instanceof CardboardError) return translated;
  return new CardboardError(`Cannot ${action} ${path}: ${(err as Error).message}`, { cause: err });
}

/** Change the config and write it back through conf, file mode 0600, directory 0700. Returns the new config. */
export async function updateConfig(env: Env, change: (config: CardboardConfig) => void): Promise<CardboardConfig> {
  const config = readConfig(env);
  change(config);
  const dir = configDir(env);
  try {
    ensurePrivateDir(dir);
  } catch (err) {
    throw configFileError(err, 'use the config directory', dir);
  }
  const { default: Conf } = await import('conf');
  const data: Record<string, unknown> = { boards: config.boards };
  if (config.defaultBoard !== undefined) data.defaultBoard = config.defaultBoard;
  const file = configPath(env);
  try {
    const store = new Conf<Record<string, unknown>>({ cwd: dir, configName: 'config', configFileMode: 0o600, projectName: 'cardboard', projectSuffix: '' });
    store.store = data;
    // conf creates it 0600 and fixes a wider mode on write (PITFALLS); a file in its place that is not ours is left alone.
    tightenFile(store.path);
  } catch (err) {
    throw configFileError(err, 'write the config file', file);
  }
  return config;
}
