// A board's mirror filled by the store itself (no service): the file `cardboard query` reads in these tests,
// and the environment that selects it.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import type { Card, Field } from '../../src/spec-types.js';
import { tempDir } from '../helpers/cli.js';

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

/**
 * The store's code as built (dist/), run in a child process: libsql closes a connection for good only once
 * its statements are garbage (and then checkpoints the write-ahead log into the file), so a store opened in
 * the test's own process could change the file at any later moment of the test.
 */
const FILL = `
const [{ openMirror }, { serverIdentity }] = await Promise.all([import(process.env.OPEN_JS), import(process.env.LOCK_JS)]);
const { env, board, fields, cards } = JSON.parse(process.env.FILL);
const store = openMirror(env, { ...board, server: await serverIdentity(board.baseUrl) }, { create: true });
const now = new Date().toISOString();
store.saveSchema(fields);
const pull = store.beginPull(now);
store.savePage(pull, 0, cards);
store.finishPull(pull, [], now);
store.close();
`;

const dist = (path: string) => new URL(`../../dist/${path}`, import.meta.url).href;

/** Fill the mirror of `board` named by `env` (CARDBOARD_MIRROR) with one complete pull of `cards`, through the store. */
export function fillMirror(env: Record<string, string>, board: { baseUrl: string; id: string }, fields: readonly Field[], cards: readonly Card[]): void {
  const fill = JSON.stringify({ env, board, fields, cards });
  execFileSync(process.execPath, ['--input-type=module', '-e', FILL], { env: { ...process.env, FILL: fill, OPEN_JS: dist('mirror/open.js'), LOCK_JS: dist('import/board-lock.js') }, stdio: ['ignore', 'ignore', 'inherit'] });
}

/** A mirror of CARDS in a fresh directory; `env` selects it for a run of cardboard. */
export function filledMirror(cards: readonly Card[] = CARDS): { file: string; env: Record<string, string> } {
  const file = join(tempDir('cardboard-query-'), 'board.sqlite');
  const env = { CARDBOARD_MIRROR: file, CARDBOARD_BOARD: BOARD, CARDBOARD_BASE_URL: BASE_URL };
  fillMirror(env, { baseUrl: BASE_URL, id: BOARD }, FIELDS, cards);
  return { file, env };
}
