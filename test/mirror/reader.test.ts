// Read-only SQL over a mirror (src/mirror/reader.ts): each lock against a write is checked alone, so that
// removing any one of them fails a test here.
import { describe, expect, it, onTestFinished } from 'vitest';
import { CardboardError, ExitCode, UsageError } from '../../src/errors.js';
import { openMirrorReader } from '../../src/mirror/open.js';
import { countStatements } from '../../src/mirror/reader.js';
import type { MirrorReader } from '../../src/mirror/types.js';
import { fillStore } from '../helpers/mirror.js';
import { BOARD, mirrorEnv, newMirror, rowsOf } from './helpers.js';

/** A mirror with two cards and a reader of it. */
function filled(): { reader: MirrorReader; path: string } {
  const env = mirrorEnv();
  const store = newMirror(env);
  fillStore(store, [{ _id: 'a', Status: 'Open' }, { _id: 'b', Status: 'Done' }], { fields: [{ name: 'Status', uuid: 'u1' }], at: 't' });
  store.close();
  const reader = openMirrorReader(env, BOARD);
  onTestFinished(() => reader.close());
  return { reader, path: env.CARDBOARD_MIRROR };
}

/** The UsageError `fn` throws. */
function refusal(fn: () => unknown): UsageError {
  try {
    fn();
  } catch (err) {
    if (err instanceof UsageError) return err;
    throw err;
  }
  throw new Error('nothing was refused');
}

const cardCount = (path: string) => rowsOf(path, 'SELECT count(*) FROM cards')[0]![0];

describe('MirrorReader', () => {
  it('answers one read statement: its column names and its rows, as arrays', () => {
    const { reader } = filled();
    const result = reader.query('SELECT _id, "Status" AS s FROM card_fields ORDER BY _id;');
    expect(result.columns).toEqual(['_id', 's']);
    expect([...result.rows]).toEqual([['a', 'Open'], ['b', 'Done']]);
  });

  it.each([
    ['DELETE FROM cards', 'DELETE'],
    ['  -- a comment\n update cards set body = 1', 'UPDATE'],
    ["insert into meta (key, value) values ('x', 'y')", 'INSERT'],
    ['DROP VIEW card_fields', 'DROP'],
    ['PRAGMA query_only = 0', 'PRAGMA'],
    ["ATTACH 'other.db' AS o", 'ATTACH'],
  ])('refuses a statement that returns no rows (%s), running nothing (exit 2)', (sql, verb) => {
    const { reader, path } = filled();
    const err = refusal(() => reader.query(sql));
    expect([err.exitCode, err.message]).toEqual([ExitCode.usage, `query is read-only: ${verb} statements are refused; nothing was run.`]);
    expect(cardCount(path)).toBe(2);
    expect([...reader.query('PRAGMA query_only').rows]).toEqual([[1n]]);
  });

  it.each(['', '   ', ';', '-- only a comment', '/* nothing */ ;'])('refuses an empty query (%j)', (sql) => {
    const { reader } = filled();
    expect(refusal(() => reader.query(sql)).message).toBe('query is empty: give one SQL statement, e.g. "SELECT count(*) FROM cards".');
  });

  it.each(['SELECT 1; DELETE FROM cards', 'select 1;select 2', "SELECT ';'; DELETE FROM cards -- ;"])('refuses more than one statement (%j), running none', (sql) => {
    const { reader, path } = filled();
    expect(refusal(() => reader.query(sql)).message).toBe('query holds 2 statements: give one at a time; nothing was run.');
    expect(cardCount(path)).toBe(2);
  });

  it('is a query_only connection: a statement that returns rows and writes is stopped by SQLite', () => {
    const { reader, path } = filled();
    expect([...reader.query('PRAGMA query_only').rows]).toEqual([[1n]]);
    const result = reader.query("INSERT INTO meta (key, value) VALUES ('x', 'y') RETURNING key");
    expect(() => [...result.rows]).toThrow(CardboardError);
    expect(rowsOf(path, "SELECT count(*) FROM meta WHERE key = 'x'")).toEqual([[0]]);
  });

  it('opens the file read-only: with every guard of its own bypassed, a write still fails with SQLITE_READONLY', () => {
    const { reader, path } = filled();
    const db = (reader as unknown as { db: { exec(sql: string): void } }).db;
    let code: unknown;
    try {
      db.exec("PRAGMA query_only = 0; INSERT INTO meta (key, value) VALUES ('x', 'y')");
    } catch (err) {
      code = (err as { code?: unknown }).code;
    }
    expect(code).toBe('SQLITE_READONLY');
    expect(rowsOf(path, "SELECT count(*) FROM meta WHERE key = 'x'")).toEqual([[0]]);
  });

  it('turns an error of SQLite in the statement into one for the user', () => {
    const { reader } = filled();
    const err = refusal(() => reader.query('SELECT missing FROM cards'));
    expect(err.message).toBe('query: no such column: missing');
  });

  it('opens a mirror at a path with characters a URI would read (space, ?, #, %)', () => {
    const env = mirrorEnv();
    const named = { ...env, CARDBOARD_MIRROR: env.CARDBOARD_MIRROR.replace(/m\.db$/, 'my mirror?x=1#%41.db') };
    newMirror(named).close();
    const reader = openMirrorReader(named, BOARD);
    expect([...reader.query('SELECT count(*) FROM cards').rows]).toEqual([[0n]]);
    reader.close();
  });
});

describe('countStatements', () => {
  it.each([
    ['', 0],
    [' ; ;; ', 0],
    ['select 1', 1],
    ['select 1;', 1],
    ['select 1; -- and a comment', 1],
    ["select 'a;b', \"c;d\", `e;f`, [g;h] from t", 1],
    ["select 'it''s;' ; select 2", 2],
    ['select 1 /* ; */ ; /* ; */', 1],
    ['select 1 -- ;\n; select 2', 2],
    ["select 'unterminated ;", 1],
    ['select 1 /* unterminated ;', 1],
    ['select 1;select 2;select 3', 3],
  ])('%j holds %i', (sql, n) => {
    expect(countStatements(sql)).toBe(n);
  });
});
