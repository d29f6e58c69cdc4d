// A board's mirror filled by the store itself (no service): the file `cardboard query` reads in these tests,
// and the environment that selects it.
import { join } from 'node:path';
import type { Card, Field } from '../../src/spec-types.js';
import { tempDir } from '../helpers/cli.js';
import { fillMirror } from '../helpers/mirror.js';

/** A base URL nothing listens on: a command that sent a request would fail. */
const BASE_URL = 'http://127.0.0.1:9';
const BOARD = 'board-q';

export const FIELDS: Field[] = [
  { name: 'Name', uuid: 'u-name', type: 'text' },
  { name: 'Status', uuid: 'u-status', type: 'select' },
  { name: 'Due date', uuid: 'u-due', type: 'date' },
  { name: 'Points', uuid: 'u-points', type: 'number' },
];

/** A hostile value: a colour, a window title and a bell, as a server might send them. */
export const HOSTILE = '\x1b[31mred\x1b]0;owned\x07';

export const CARDS: Card[] = [
  { _id: 'c1', Name: 'Fix login', Status: 'Open', 'Due date': '2024-01-01', Points: 3 },
  { _id: 'c2', Name: 'Ship it', Status: 'Done', 'Due date': '2024-02-01', Points: 5 },
  { _id: 'c3', Name: HOSTILE, Status: 'Open', Points: 1.5 },
];

/** A mirror of CARDS at `file` (CARDBOARD_MIRROR; the default: a file in a fresh directory); `env` selects it for a run of cardboard. */
export async function filledMirror(cards: readonly Card[] = CARDS, file = join(tempDir('cardboard-query-'), 'board.sqlite')): Promise<{ file: string; env: Record<string, string> }> {
  const env = { CARDBOARD_MIRROR: file, CARDBOARD_BOARD: BOARD, CARDBOARD_BASE_URL: BASE_URL };
  await fillMirror(env, { baseUrl: BASE_URL, id: BOARD }, cards, { fields: FIELDS });
  return { file, env };
}
