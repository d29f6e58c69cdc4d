// A board's mirror filled through the store itself, as a pull leaves it, for the tests of what reads or
// keeps one; and a mirror read (or written) by a SQLite client other than cardboard's: python3's sqlite3.
import { spawnSync } from 'node:child_process';
import { checkBaseUrl } from '../../src/http/url.js';
import { serverIdentity } from '../../src/import/board-lock.js';
import { openMirror } from '../../src/mirror/open.js';
import type { MirrorBoard, MirrorStore } from '../../src/mirror/types.js';
import type { Card, Field } from '../../src/spec-types.js';
import { BOARD_ID, type RunningEmulator, TOKEN } from './emulator.js';
import { python } from './pty.js';

/** A board as a test names it: the base URL it is served at and its id. */
export interface BoardAt {
  baseUrl: string;
  id: string;
}

/** The mirror's name for `board`: its base URL as cardboard checks it, and the server as cardboard identifies it. */
export async function mirrorBoard(board: BoardAt): Promise<MirrorBoard> {
  const baseUrl = checkBaseUrl(board.baseUrl, true);
  return { baseUrl, id: board.id, server: await serverIdentity(baseUrl) };
}

/** The emulator's test board (or `id`), as the mirror names it. */
export function emulatorBoard(emu: RunningEmulator, id = BOARD_ID): Promise<MirrorBoard> {
  return mirrorBoard({ baseUrl: emu.url, id });
}

/** The store of the mirror `env` selects (CARDBOARD_MIRROR, else under CARDBOARD_CACHE_DIR), of `board`; the caller closes it. */
export async function openTestMirror(env: Record<string, string>, board: BoardAt | MirrorBoard, create = true): Promise<MirrorStore> {
  return openMirror(env, 'server' in board ? board : await mirrorBoard(board), { create });
}

export interface FillOptions {
  /** Saved as the board's schema first. */
  fields?: readonly Field[];
  /** Cards a page (the default: all in page 0). */
  pageSize?: number;
  /** When the pull began and ended (its age is what --max-age judges); the default: now. */
  at?: string;
  /** False leaves the pull open: a mirror never pulled whole. */
  finish?: boolean;
}

/** Save `cards` to an open store as one pull would: the schema, the pages in order, then the pull's end. */
export function fillStore(store: MirrorStore, cards: readonly Card[], opts: FillOptions = {}): void {
  const at = opts.at ?? new Date().toISOString();
  const size = opts.pageSize ?? Math.max(cards.length, 1);
  if (opts.fields) store.saveSchema(opts.fields);
  const pull = store.beginPull(at);
  for (let page = 0; page === 0 || page * size < cards.length; page++) store.savePage(pull, page, cards.slice(page * size, (page + 1) * size));
  if (opts.finish !== false) store.finishPull(pull, [], at);
}

/** Fill the mirror `env` selects, of `board`, with `cards` through the store (one complete pull unless `finish` is false), and close it. */
export async function fillMirror(env: Record<string, string>, board: BoardAt | MirrorBoard, cards: readonly Card[], opts: FillOptions = {}): Promise<void> {
  const store = await openTestMirror(env, board);
  try {
    fillStore(store, cards, opts);
  } finally {
    // The store's close() leaves the file whole and its log empty: nothing writes to it afterwards.
    store.close();
  }
}

/** The emulator board's schema, read over HTTP as a pull reads it (spec 4.1). */
export async function emulatorSchema(emu: RunningEmulator, id = BOARD_ID, token = TOKEN): Promise<Field[]> {
  const res = await fetch(`${emu.url}/api/aptlet/${id}/schema`, { headers: { 'x-token': token } });
  return (await res.json()) as Field[];
}

/** One statement's result as python3's sqlite3 gives it: the column names and the rows as arrays of values. */
export interface PythonResult {
  columns: string[];
  rows: unknown[][];
}

// Each statement in turn over one connection; a connection that may write commits after each statement.
const RUN_SQL = `
import json, sqlite3, sys
path, mode = sys.argv[1], sys.argv[2]
db = sqlite3.connect('file:' + path + '?mode=ro', uri=True) if mode == 'ro' else sqlite3.connect(path)
out = []
for q in sys.argv[3:]:
    cur = db.execute(q)
    rows = cur.fetchall()
    if mode != 'ro':
        db.commit()
    out.append({'columns': [d[0] for d in cur.description or []], 'rows': rows})
print(json.dumps(out))
`;

/** Each of `statements` run over the SQLite file at `file` by python3's sqlite3, in one process; read-only unless `write`. */
export function pythonSql(file: string, statements: readonly string[], opts: { write?: boolean } = {}): PythonResult[] {
  const r = spawnSync(python(), ['-c', RUN_SQL, file, opts.write ? 'rw' : 'ro', ...statements], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`python3 sqlite3: ${r.stderr}`);
  return JSON.parse(r.stdout) as PythonResult[];
}

/** The rows of one statement by python3's sqlite3, each an object keyed by column name. */
export function pythonRows(file: string, statement: string, opts: { write?: boolean } = {}): Record<string, unknown>[] {
  const { columns, rows } = pythonSql(file, [statement], opts)[0]!;
  return rows.map((row) => Object.fromEntries(columns.map((c, i) => [c, row[i]])));
}

/** The cards of the mirror at `file` by `_id`, each its `body` parsed, as python3's sqlite3 reads them. */
export function mirrorCards(file: string): Record<string, Record<string, unknown>> {
  return Object.fromEntries(pythonSql(file, ['SELECT _id, body FROM cards'])[0]!.rows.map(([id, body]) => [String(id), JSON.parse(String(body)) as Record<string, unknown>]));
}
