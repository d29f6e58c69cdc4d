// Where a mirror lives and what opening it checks: its location, owner-only files, another board's mirror
// refused, a file of something else refused, and the file as other programs read it (Python's sqlite3).
import { createHash } from 'node:crypto';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CardboardError, ExitCode, UsageError } from '../../src/errors.js';
import { mirrorLocation, openMirror } from '../../src/mirror/open.js';
import { columnNames } from '../../src/mirror/view.js';
import { tempDir } from '../helpers/cli.js';
import { pythonSql } from '../helpers/mirror.js';
import { BOARD, mirrorEnv, newMirror, rowsOf } from './helpers.js';

const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);

/** What `fn` throws. */
function thrown(fn: () => unknown): CardboardError {
  try {
    fn();
  } catch (err) {
    if (err instanceof CardboardError) return err;
    throw err;
  }
  throw new Error('nothing was thrown');
}

describe('mirrorLocation', () => {
  it('is one file per server and board under the cache directory, named by a digest of both', () => {
    const env = { CARDBOARD_CACHE_DIR: '/c' };
    const digest = createHash('sha256').update('loopback:9\nboard-1').digest('hex').slice(0, 32);
    expect(mirrorLocation(env, BOARD)).toBe(`/c/mirror/board-${digest}.db`);
    expect(mirrorLocation(env, { ...BOARD, id: 'board-2' })).not.toBe(mirrorLocation(env, BOARD));
    expect(mirrorLocation(env, { ...BOARD, server: 'other:9' })).not.toBe(mirrorLocation(env, BOARD));
    expect(mirrorLocation(env, { ...BOARD, baseUrl: 'http://localhost:9/' })).toBe(mirrorLocation(env, BOARD));
  });

  it('is CARDBOARD_MIRROR when set, made absolute', () => {
    expect(mirrorLocation({ CARDBOARD_MIRROR: '/x/board.db', CARDBOARD_CACHE_DIR: '/c' }, BOARD)).toBe('/x/board.db');
    expect(mirrorLocation({ CARDBOARD_MIRROR: 'board.db' }, BOARD)).toBe(join(process.cwd(), 'board.db'));
  });

  it.each(['mysql://me:s3cret@db.example/cards', 'https://me:s3cret@db.example/cards'])('refuses a URL of another scheme (%s) naming only its scheme, never its password', (url) => {
    const err = thrown(() => mirrorLocation({ CARDBOARD_MIRROR: url }, BOARD));
    expect(err).toBeInstanceOf(UsageError);
    expect(err.exitCode).toBe(ExitCode.usage);
    expect(err.message).toBe(`CARDBOARD_MIRROR=${url.split(':')[0]}://… is not supported: give a file path or a postgres:// URL`);
    expect(`${err.message}\n${err.hint}`).not.toMatch(/s3cret|me:|db\.example/);
  });

  it.each(['postgres://me:s3cret@db.example/cards', 'postgresql://me:s3cret@db.example:6432/cards?sslmode=require&password=s3cret'])('is a PostgreSQL URL (%s) without its password', (url) => {
    const shown = mirrorLocation({ CARDBOARD_MIRROR: url }, BOARD);
    expect(shown).toBe(url.replace(':s3cret@', '@').replace('&password=s3cret', ''));
    expect(shown).not.toContain('s3cret');
  });
});

describe('openMirror', () => {
  it('without create, and no mirror there: an error naming where it looked, with the commands that fill one (exit 1)', () => {
    const env = { CARDBOARD_CACHE_DIR: join(tempDir(), 'cache') };
    const err = thrown(() => openMirror(env, BOARD, { create: false }));
    expect(err.exitCode).toBe(ExitCode.failure);
    expect(err.message).toBe(`No mirror of this board at ${mirrorLocation(env, BOARD)}.`);
    expect(err.hint).toBe('Fill it with `cardboard mirror pull`, or keep it fed with `cardboard webhook listen --mirror`.');
  });

  it('without create, opens a mirror that is there', () => {
    const env = mirrorEnv();
    newMirror(env).close();
    const again = openMirror(env, BOARD, { create: false });
    expect(again.count()).toBe(0);
    again.close();
  });

  it('makes the file 0600 (and SQLite its -wal and -shm) in a 0700 directory, under umask 022', () => {
    const env = { CARDBOARD_CACHE_DIR: join(tempDir(), 'cache') };
    const before = process.umask(0o022);
    try {
      const store = newMirror(env);
      store.applyDeliveries([{ kind: 'comment', receivedAt: 't' }]);
      const file = mirrorLocation(env, BOARD);
      expect([mode(file), mode(`${file}-wal`), mode(`${file}-shm`), mode(join(file, '..')), mode(env.CARDBOARD_CACHE_DIR)]).toEqual(['600', '600', '600', '700', '700']);
    } finally {
      process.umask(before);
    }
  });

  it('uses a file the user named that exists as it is: its mode is theirs', () => {
    const env = mirrorEnv();
    writeFileSync(env.CARDBOARD_MIRROR, '', { mode: 0o644 });
    newMirror(env).saveSchema([]);
    expect(mode(env.CARDBOARD_MIRROR)).toBe('644');
  });

  it("refuses another board's mirror, naming both boards and the file, and changes nothing", () => {
    const env = mirrorEnv();
    const store = newMirror(env);
    store.savePage(store.beginPull('t'), 0, [{ _id: 'a' }]);
    store.close();
    const bytes = readFileSync(env.CARDBOARD_MIRROR);
    for (const other of [{ ...BOARD, id: 'board-2' }, { ...BOARD, server: 'cards.example:443' }]) {
      const err = thrown(() => openMirror(env, other, { create: true }));
      expect(err).toBeInstanceOf(UsageError);
      expect(err.message).toBe(`The mirror ${env.CARDBOARD_MIRROR} holds board "board-1" of loopback:9, not board ${JSON.stringify(other.id)} of ${other.server}; nothing was changed.`);
    }
    expect(readFileSync(env.CARDBOARD_MIRROR).equals(bytes)).toBe(true);
    expect(rowsOf(env.CARDBOARD_MIRROR, 'SELECT _id FROM cards')).toEqual([['a']]);
  });

  it('refuses a file that is not SQLite, and a SQLite database of something else, changing neither', () => {
    const env = mirrorEnv();
    writeFileSync(env.CARDBOARD_MIRROR, 'my notes\n'.repeat(100));
    expect(thrown(() => openMirror(env, BOARD, { create: true })).message).toBe(`${env.CARDBOARD_MIRROR} is not a SQLite file, so it cannot hold a mirror; nothing was changed.`);
    expect(readFileSync(env.CARDBOARD_MIRROR, 'utf8')).toBe('my notes\n'.repeat(100));
    const other = mirrorEnv();
    pythonSql(other.CARDBOARD_MIRROR, ['create table notes (t)'], { write: true });
    const err = thrown(() => openMirror(other, BOARD, { create: true }));
    expect([err.exitCode, err.message]).toEqual([ExitCode.usage, `${other.CARDBOARD_MIRROR} is a SQLite database of something else, not a mirror; nothing was changed.`]);
    expect(rowsOf(other.CARDBOARD_MIRROR, "SELECT name FROM sqlite_master WHERE type = 'table'")).toEqual([['notes']]);
  });

  it('refuses a directory, and a path the system refuses, naming it (exit 2)', () => {
    const dir = tempDir();
    const err = thrown(() => openMirror({ CARDBOARD_MIRROR: dir }, BOARD, { create: true }));
    expect([err.exitCode, err.message]).toEqual([ExitCode.usage, `CARDBOARD_MIRROR ${dir} is a directory: give a file path, such as ${join(dir, 'board.db')}.`]);
    const file = join(dir, 'file');
    writeFileSync(file, 'x');
    const under = thrown(() => openMirror({ CARDBOARD_MIRROR: join(file, 'm.db') }, BOARD, { create: true }));
    // Node 20 reports the file in the path as ENOTDIR; Node 22 and later, making the directory, as EEXIST at it.
    expect(under.exitCode).toBe(ExitCode.usage);
    expect([
      `Cannot open the mirror ${join(file, 'm.db')}: a part of the path is not a directory (ENOTDIR).`,
      `Cannot open the mirror ${join(file, 'm.db')} (at ${file}): a file of that name is in the way (EEXIST).`,
    ]).toContain(under.message);
  });

  it('refuses a mirror in a newer format than it reads, changing nothing', () => {
    const env = mirrorEnv();
    newMirror(env).close();
    pythonSql(env.CARDBOARD_MIRROR, ["update meta set value = '2' where key = 'format'"], { write: true });
    const err = thrown(() => openMirror(env, BOARD, { create: true }));
    expect(err.message).toBe(`The mirror ${env.CARDBOARD_MIRROR} is in format 2, newer than this cardboard reads (1); nothing was changed.`);
    expect(rowsOf(env.CARDBOARD_MIRROR, "SELECT value FROM meta WHERE key = 'format'")).toEqual([['2']]);
  });
});

/** Field names that SQL, JSON paths and JavaScript objects each find hard to hold. */
const HOSTILE = ['Status', 'status', 'STATUS', '_id', '_ID', 'a"b', '"', "it's", 'x.y', '$', '$.x', '[0]', 'a[1]', 'b\\c', '__proto__', 'constructor', 'É', 'é', '', 'new\nline', 'tab\there', 'emoji 🎉', '-- c', '; DROP TABLE cards; --', 'a]b', 'status_2', 'nul\0x'];

describe('the file as another program reads it (Python sqlite3)', () => {
  it('holds the cards as saved, and one column per field whatever its name, with the values of the card', () => {
    const env = mirrorEnv();
    const store = newMirror(env);
    store.saveSchema(HOSTILE.map((name, i) => ({ name, uuid: `u${i}` })));
    const cards = [0, 1, 2].map((n) => {
      const c: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
      HOSTILE.forEach((name, i) => {
        // Each field its own value (card 2 leaves some out); `_id` is the card's id, never a field's value.
        if (name !== '_id' && (n < 2 || i % 3 !== 0)) c[name] = i % 4 === 0 ? n * 100 + i : `field ${i}·${n}`;
      });
      c._id = `card-${n}`;
      return { ...c } as { _id: string };
    });
    store.savePage(store.beginPull('t'), 0, cards);
    store.close();
    const [body, view] = pythonSql(env.CARDBOARD_MIRROR, ['SELECT _id, body FROM cards ORDER BY _id', 'SELECT * FROM card_fields ORDER BY _id']);
    const read = { cards: body!.rows.map(([id, text]) => [id, JSON.parse(String(text))]), columns: view!.columns, rows: view!.rows };
    expect(read.cards).toEqual(cards.map((c) => [c._id, c]));
    expect(read.columns).toEqual(['_id', ...columnNames(HOSTILE)]);
    expect(new Set(read.columns.map((c) => c.replace(/[A-Z]/g, (l) => l.toLowerCase()))).size).toBe(read.columns.length);
    // A field named `_id` is the card's `_id` key: its column (`_id_2`) shows the id.
    const valueOf = (c: Record<string, unknown>, name: string) => (Object.hasOwn(c, name) ? c[name] : null);
    expect(read.rows).toEqual(cards.map((c) => [c._id, ...HOSTILE.map((name) => valueOf(c, name))]));
  });
});

describe('columnNames', () => {
  it('keeps a name, and gives a later one that SQLite would take for it (ASCII case folded) the first free _2, _3…', () => {
    expect(columnNames(['Status', 'status', 'STATUS', 'status_2', '_id', 'É', 'é', '', 'a\0b', 'x\ud800'])).toEqual([
      'Status', 'status_2', 'STATUS_3', 'status_2_2', '_id_2', 'É', 'é', '_', 'a\ufffdb', 'x\ufffd',
    ]);
  });
});
