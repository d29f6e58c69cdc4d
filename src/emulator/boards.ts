import { readFile } from 'node:fs/promises';
import type { UpdateMode } from '../spec-types.js';
import { derivedId, randomId } from './ids.js';
import type { BoardSettings, BoardsFile } from './types.js';

/** A boards file that cannot be used: its message names the board and the setting. */
export class BoardsFileError extends Error {
  override name = 'BoardsFileError';
}

const UPDATE_MODES: readonly UpdateMode[] = ['Update if exists', 'Always Create New'];

/** Fields of the demo board. */
const DEMO_FIELDS = ['Name', 'Status', 'Owner', 'Priority'];

/**
 * The demo board's fixed credentials (README): the same after every restart, so a stored alias keeps
 * working. Public, so only for an emulator on loopback (`cardboard emulator` refuses anything else).
 */
export const DEMO_BOARD_ID = 'DemoBoardK7fR2mQx';
export const DEMO_TOKEN = 'demo-token-loopback-only';
export const DEMO_SIGNING_KEY = 'demo-signing-key-loopback-only';

/**
 * The demo board (printed by `cardboard emulator`): the fixed credentials above, or, given a seed,
 * an id, token and signing key derived from it (the same for the same seed, unguessable without it).
 */
export function demoBoards(seed?: string): BoardsFile {
  const fields = [...DEMO_FIELDS];
  if (seed === undefined) return { [DEMO_BOARD_ID]: { token: DEMO_TOKEN, fields, signingKey: DEMO_SIGNING_KEY } };
  return {
    [derivedId(seed, 'board')]: { token: derivedId(seed, 'token', 32), fields, signingKey: derivedId(seed, 'signing-key', 32) },
  };
}

/** Check a parsed boards file and fill in the defaults of spec 2.4; throws BoardsFileError. */
export function normalizeBoards(file: unknown): Record<string, BoardSettings> {
  if (typeof file !== 'object' || file === null || Array.isArray(file)) {
    throw new BoardsFileError('the boards file must be a JSON object of board id → settings');
  }
  // Null prototype: a board id is the file's string (`__proto__`, `toString`), never a key of Object.prototype.
  const out: Record<string, BoardSettings> = Object.create(null);
  for (const [id, raw] of Object.entries(file)) {
    const where = `board "${id}"`;
    if (id === '') throw new BoardsFileError('a board id is empty');
    if (typeof raw !== 'object' || raw === null) throw new BoardsFileError(`${where}: settings must be an object`);
    const settings = raw as Record<string, unknown>;
    if (typeof settings.token !== 'string' || settings.token === '') throw new BoardsFileError(`${where}: "token" must be a non-empty string`);
    if (!Array.isArray(settings.fields) || !settings.fields.every((f) => typeof f === 'string' && f !== '')) {
      throw new BoardsFileError(`${where}: "fields" must be an array of non-empty strings`);
    }
    if (new Set(settings.fields).size !== settings.fields.length) throw new BoardsFileError(`${where}: "fields" has a duplicate name`);
    // `_id` is the card's identifier (spec 2.2), never a field.
    if (settings.fields.includes('_id')) throw new BoardsFileError(`${where}: "_id" cannot be a field name`);
    const updateMode = settings.updateMode ?? 'Update if exists';
    if (!UPDATE_MODES.includes(updateMode as UpdateMode)) {
      throw new BoardsFileError(`${where}: "updateMode" must be "Update if exists" or "Always Create New"`);
    }
    if (settings.createFields !== undefined && typeof settings.createFields !== 'boolean') {
      throw new BoardsFileError(`${where}: "createFields" must be true or false`);
    }
    const webhookUrl = settings.webhookUrl ?? null;
    if (webhookUrl !== null && (typeof webhookUrl !== 'string' || !/^https?:\/\/./.test(webhookUrl))) {
      throw new BoardsFileError(`${where}: "webhookUrl" must be an http(s) URL or null`);
    }
    if (settings.signingKey !== undefined && (typeof settings.signingKey !== 'string' || settings.signingKey === '')) {
      throw new BoardsFileError(`${where}: "signingKey" must be a non-empty string`);
    }
    out[id] = {
      token: settings.token,
      fields: [...(settings.fields as string[])],
      updateMode: updateMode as UpdateMode,
      createFields: settings.createFields === true,
      webhookUrl: webhookUrl as string | null,
      signingKey: (settings.signingKey as string | undefined) ?? randomId(32),
    };
  }
  if (Object.keys(out).length === 0) throw new BoardsFileError('the boards file defines no board');
  return out;
}

/** Read and parse a boards file (JSON); throws BoardsFileError with the reason. */
export async function readBoardsFile(path: string): Promise<BoardsFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new BoardsFileError(`cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  try {
    const parsed = JSON.parse(text) as unknown;
    normalizeBoards(parsed);
    return parsed as BoardsFile;
  } catch (err) {
    if (err instanceof BoardsFileError) throw new BoardsFileError(`${path}: ${err.message}`);
    throw new BoardsFileError(`${path} is not valid JSON: ${(err as Error).message}`);
  }
}
