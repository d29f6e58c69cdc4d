import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CardboardError, UsageError } from '../errors.js';
import { fileError } from '../fs-errors.js';
import { makePrivateDir, PRIVATE_FILE_MODE } from '../private-file.js';
import { configDir } from './dirs.js';
import { importWithoutStopHooks } from '../interrupt.js';

export { cacheDir, configDir } from './dirs.js';

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

/** The config file path: `<configDir>/config.json`. */
export function configPath(env: Env): string {
  return join(configDir(env), 'config.json');
}

/** The config's shape as conf checks it on every read and write (a broken file is a clear exit 2). */
const SCHEMA = {
  defaultBoard: { type: 'string' },
  boards: {
    type: 'object',
    additionalProperties: {
      type: 'object',
      required: ['id', 'baseUrl', 'token'],
      properties: { id: { type: 'string' }, baseUrl: { type: 'string' }, token: { type: 'string' }, signingKey: { type: 'string' } },
    },
  },
} as const;

/** The stored data copied into a null-prototype record: an alias is a user's string, never a key of Object.prototype. */
function toConfig(raw: Record<string, unknown>): CardboardConfig {
  const out = emptyConfig();
  if (typeof raw.defaultBoard === 'string') out.defaultBoard = raw.defaultBoard;
  for (const [alias, b] of Object.entries((raw.boards ?? {}) as Record<string, StoredBoard>)) {
    const stored: StoredBoard = { id: b.id, baseUrl: b.baseUrl, token: b.token };
    if (typeof b.signingKey === 'string') stored.signingKey = b.signingKey;
    out.boards[alias] = stored;
  }
  return out;
}

type ConfInstance = import('conf').default<Record<string, unknown>>;

/**
 * Open the file through conf (its schema, and the owner-only file mode); conf's own errors become one line
 * naming the file. The file's mode is set here and nowhere else: conf writes a temporary file created with
 * configFileMode, chmods it to exactly that mode and renames it into place, so the file holding tokens is
 * owner-only from its first byte. A chmod after the write would be a second mechanism that could only
 * open a moment in which another user may read the tokens.
 */
async function openConf(dir: string, file: string): Promise<ConfInstance> {
  const { default: Conf } = await importWithoutStopHooks(() => import('conf'));
  try {
    return new Conf<Record<string, unknown>>({
      cwd: dir,
      configName: 'config',
      configFileMode: PRIVATE_FILE_MODE,
      projectName: 'cardboard',
      projectSuffix: '',
      schema: SCHEMA as never,
      clearInvalidConfig: false,
    });
  } catch (err) {
    if (err instanceof SyntaxError) throw new UsageError(`The config file ${file} is not valid JSON.`, { hint: 'Fix or remove it, then run `cardboard board add`.', cause: err });
    // conf lists every violation; the first names the thing to fix in one line.
    const detail = err instanceof Error && /schema violation/i.test(err.message) ? `: ${err.message.replace(/^Config schema violation:\s*/i, '').split('; ')[0]}` : '';
    if (detail) throw new UsageError(`The config file ${file} is not a cardboard config${detail}.`, { hint: 'Fix or remove it, then run `cardboard board add`.', cause: err });
    throw configFileError(err, 'read the config file', file);
  }
}

/**
 * The one place that reads and writes the config file (board aliases and their secrets), through conf with
 * its schema and file mode. Reading never creates anything: a CI job with only CARDBOARD_* variables has no
 * file and must not get one (conf would create its directory), and loading conf (its schema validator is slow to load) is
 * left to runs that have a file to read or something to store.
 */
export interface ConfigStore {
  /** The file's path. */
  readonly path: string;
  /** The config (read once per run; an absent or empty file is an empty config). */
  read(): Promise<CardboardConfig>;
  /** Change the config and write it back (file 0600, directory 0700); returns the new config. */
  update(change: (config: CardboardConfig) => void): Promise<CardboardConfig>;
}

/** The config store of `env`'s config directory (CARDBOARD_CONFIG_DIR, XDG_CONFIG_HOME, ~/.config). */
export function configStore(env: Env): ConfigStore {
  const dir = configDir(env);
  const file = configPath(env);
  let current: Promise<CardboardConfig> | undefined;
  const load = async (): Promise<CardboardConfig> => {
    let text: string;
    try {
      if (!existsSync(file)) return emptyConfig();
      text = readFileSync(file, 'utf8');
    } catch (err) {
      throw configFileError(err, 'read the config file', file);
    }
    if (!text.trim()) return emptyConfig();
    return toConfig((await openConf(dir, file)).store);
  };
  return {
    path: file,
    read: () => (current ??= load()),
    async update(change) {
      const config = structuredCopy(await (current ??= load()));
      change(config);
      try {
        // Made here, owner-only (conf would create it 0755); one that exists, such as CARDBOARD_CONFIG_DIR=/tmp, keeps its mode.
        makePrivateDir(dir);
      } catch (err) {
        throw configFileError(err, 'use the config directory', dir);
      }
      const store = await openConf(dir, file);
      const data: Record<string, unknown> = { boards: config.boards };
      if (config.defaultBoard !== undefined) data.defaultBoard = config.defaultBoard;
      try {
        // Owner-only by conf's configFileMode (openConf).
        store.store = data;
      } catch (err) {
        throw configFileError(err, 'write the config file', file);
      }
      current = Promise.resolve(config);
      return config;
    },
  };
}

/** A config's copy (its boards' record keeps the null prototype), so a failed write leaves what was read intact. */
function structuredCopy(config: CardboardConfig): CardboardConfig {
  const out = emptyConfig();
  if (config.defaultBoard !== undefined) out.defaultBoard = config.defaultBoard;
  for (const [alias, b] of Object.entries(config.boards)) out.boards[alias] = { ...b };
  return out;
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
