// `cardboard query "SQL"` over a board's mirror filled by the store: rows as card list prints cards, writes
// refused with the mirror left as it was (on each engine), SQL errors on one line with the tables named.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { BIN, childEnv, runCli, runMain, tempDir } from '../helpers/cli.js';
import { absent, ENGINES } from '../helpers/engines.js';
import { ndjson } from '../commands/helpers.js';
import { filledMirror } from './mirror-fixture.js';

let mirror: { file: string; env: Record<string, string> };
beforeAll(async () => {
  mirror = await filledMirror();
});

const query = (args: string[], opts: { input?: string; env?: Record<string, string> } = {}) => runMain(['query', ...args], { input: opts.input, env: { ...mirror.env, ...opts.env } });

/**
 * The file's bytes and times (and its write-ahead log's, if it holds anything), to tell that nothing wrote to
 * it. An empty log is no log: the store's close() empties it, and SQLite deletes it when the last connection
 * to the file closes, which for the store that filled it is whenever its statements are collected.
 */
function fingerprint(file: string): string {
  return [file, `${file}-wal`]
    .filter((f) => existsSync(f) && statSync(f).size > 0)
    .map((f) => `${f} ${createHash('sha256').update(readFileSync(f)).digest('hex')} ${statSync(f).mtimeMs} ${statSync(f).size}`)
    .join('\n');
}

describe('cardboard query: rows', () => {
  it('piped: NDJSON, one object per row keyed by column name; no request made', async () => {
    const r = await query(["SELECT _id, json_extract(body, '$.Status') AS status, json_extract(body, '$.Points') AS points FROM cards ORDER BY _id"]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(ndjson(r.stdout)).toEqual([
      { _id: 'c1', status: 'Open', points: 3 },
      { _id: 'c2', status: 'Done', points: 5 },
      { _id: 'c3', status: 'Open', points: 1.5 },
    ]);
  });

  it('the help example: count by status', async () => {
    const r = await query(["SELECT json_extract(body,'$.Status') AS status, count(*) FROM cards GROUP BY 1"]);
    expect(r.code, r.stderr).toBe(0);
    expect(ndjson(r.stdout)).toEqual([
      { status: 'Done', 'count(*)': 1 },
      { status: 'Open', 'count(*)': 2 },
    ]);
  });

  it('card_fields: a column per field, a name with a space quoted', async () => {
    const r = await query(['SELECT _id, "Due date", Points FROM card_fields WHERE "Due date" >= \'2024-01-15\'']);
    expect(r.code, r.stderr).toBe(0);
    expect(ndjson(r.stdout)).toEqual([{ _id: 'c2', 'Due date': '2024-02-01', Points: 5 }]);
  });

  it('--format csv, --format json, --json and --fields', async () => {
    const sql = 'SELECT _id, Name, Status FROM card_fields ORDER BY _id LIMIT 2';
    const csv = await query(['--format', 'csv', sql]);
    expect(csv.stdout).toBe('_id,Name,Status\r\nc1,Fix login,Open\r\nc2,Ship it,Done\r\n');
    const json = await query(['--format', 'json', sql]);
    expect(JSON.parse(json.stdout)).toEqual([
      { _id: 'c1', Name: 'Fix login', Status: 'Open' },
      { _id: 'c2', Name: 'Ship it', Status: 'Done' },
    ]);
    expect((await query(['--json', sql])).stdout).toBe(json.stdout);
    const fields = await query(['--fields', 'Status,_id', '--format', 'csv', sql]);
    expect(fields.stdout).toBe('Status,_id\r\nOpen,c1\r\nDone,c2\r\n');
    expect(ndjson((await query(['--fields', 'Status', sql])).stdout)).toEqual([{ Status: 'Open' }, { Status: 'Done' }]);
    const unknown = await query(['--fields', 'Statsu', sql]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('the result has no column "Statsu"');
    expect(unknown.stderr).toContain('Did you mean Status?');
  });

  it('repeated column names are made distinct, and stderr says so', async () => {
    const r = await query(["SELECT Name AS name, Status AS name, _id AS name FROM card_fields WHERE _id = 'c1'"]);
    expect(r.code).toBe(0);
    expect(ndjson(r.stdout)).toEqual([{ name: 'Fix login', name_2: 'Open', name_3: 'c1' }]);
    expect(r.stderr).toContain('columns with the same name are renamed: name → name_2, name → name_3');
    // A suffix already taken by another column is skipped.
    expect((await query(['SELECT 1 AS name_2, 2 AS name, 3 AS name'])).stdout).toBe('{"name_2":1,"name":2,"name_3":3}\n');
  });

  it('values as JSON: integers, reals, text, null; blobs as base64, said on stderr', async () => {
    const r = await query(["SELECT 42 AS i, -1.25 AS r, 'x' AS t, NULL AS n, x'00ff10' AS b"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('{"i":42,"r":-1.25,"t":"x","n":null,"b":"AP8Q"}\n');
    expect(r.stderr).toContain('blob values are written as base64 text (b)');
  });

  it('an integer past 2^53 keeps its digits, as decimal text (said on stderr)', async () => {
    const r = await query(['SELECT 9007199254740993 AS big, -9007199254740993 AS negative, 9007199254740991 AS safe']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('{"big":"9007199254740993","negative":"-9007199254740993","safe":9007199254740991}\n');
    expect(r.stderr).toContain('integers beyond ±2^53 are written as decimal text, which keeps every digit (big, negative)');
  });

  it('- reads the SQL from stdin', async () => {
    const r = await query(['-'], { input: "SELECT count(*) AS n\nFROM cards\nWHERE json_extract(body, '$.Status') = 'Open'\n" });
    expect(r.code, r.stderr).toBe(0);
    expect(ndjson(r.stdout)).toEqual([{ n: 2 }]);
  });

  it('--schema lists the tables and the view with their columns', async () => {
    const r = await query(['--schema']);
    expect(r.code, r.stderr).toBe(0);
    const rows = ndjson(r.stdout);
    const columnsOf = (table: string) => rows.filter((row) => row.table === table).map((row) => row.column);
    expect(columnsOf('cards')).toEqual(expect.arrayContaining(['_id', 'body']));
    expect(columnsOf('card_fields')).toEqual(expect.arrayContaining(['_id', 'Name', 'Status', 'Due date', 'Points']));
    expect(rows.find((row) => row.table === 'card_fields')?.kind).toBe('view');
  });

  it('a large result streams: the first row reaches a reader before an endless statement ends', async () => {
    const child = spawn(process.execPath, [BIN, 'query', 'WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT i FROM n'], { env: childEnv({ env: mirror.env }) });
    // The statement never ends: a run that does not stream must not outlive the test.
    onTestFinished(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    const first = await new Promise<string>((resolve) => {
      let text = '';
      child.stdout.on('data', (b: Buffer) => {
        text += b.toString();
        if (text.includes('\n')) resolve(text.slice(0, text.indexOf('\n')));
      });
    });
    expect(first).toBe('{"i":1}');
    // The reader goes away (`| head -1`): the run ends as a broken pipe ends it, with no error.
    child.stdout.destroy();
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(0);
  });
});

// The refusals, on each engine: the mirror is left as it was (SQLite: the file's bytes; PostgreSQL: every
// row of every table of the schema, and the schema's relations).
describe.each(ENGINES)('cardboard query: writes refused ($name)', (engine) => {
  if (absent(engine)) return;

  let at: { file: string; env: Record<string, string> };
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const lasting = await engine.lasting();
    drop = lasting.drop;
    at = await filledMirror(undefined, lasting.location);
  });
  afterAll(() => drop());

  /** What the mirror holds, to tell that nothing wrote to it. */
  const state = async (): Promise<string> => {
    if (engine.name === 'sqlite') return fingerprint(at.file);
    const relations = await engine.rows(at.file, "SELECT relname, relkind FROM pg_class WHERE relnamespace = CAST(current_schema() AS regnamespace) ORDER BY relname");
    const tables = relations.filter(([, kind]) => kind === 'r').map(([name]) => String(name));
    const rows = await Promise.all(tables.map((t) => engine.rows(at.file, `SELECT * FROM ${t} ORDER BY 1, 2`)));
    return JSON.stringify({ relations, rows });
  };

  it.each([
    ['DELETE FROM cards'],
    ["INSERT INTO cards (_id, body) VALUES ('x', '{}')"],
    ["UPDATE cards SET body = '{}'"],
    ['DROP TABLE cards'],
    ['DROP VIEW card_fields'],
    ["ATTACH DATABASE 'other.sqlite' AS other"],
    ['SELECT 1; DELETE FROM cards'],
    ['PRAGMA user_version = 7'],
    ["VACUUM INTO 'copy.sqlite'"],
    ['CREATE TABLE t (x)'],
  ])('%s: exit 2, and the mirror is left as it was', async (sql) => {
    const before = await state();
    const cwd = tempDir();
    const r = await runCli(['query', sql], { env: at.env, cwd });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/^error: query (is read-only: [A-Z]+ statements are refused|holds 2 statements: give one at a time); nothing was run\.$/m);
    expect(r.stdout).toBe('');
    expect(await state()).toBe(before);
    expect((await engine.rows(at.file, 'SELECT _id FROM cards ORDER BY _id')).flat()).toEqual(['c1', 'c2', 'c3']);
    expect(existsSync(join(cwd, 'other.sqlite')) || existsSync(join(cwd, 'copy.sqlite'))).toBe(false);
  });
});

describe('cardboard query: refused', () => {
  it('a syntax error: exit 2, SQLite\'s message on one line, the tables named', async () => {
    const r = await query(['SELEC * FROM cards']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^error: query: near "SELEC": syntax error\nhint: The mirror's tables: cards, .*; views: card_fields\./);
    expect(r.stderr).toContain('cardboard query --schema');
  });

  it('no such column: exit 2 with the message', async () => {
    const r = await query(['SELECT Statsu FROM card_fields']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error: query: no such column: Statsu\n/);
  });

  it('an error while the rows are read (malformed JSON in a card): exit 2 with the message', async () => {
    const r = await query(["SELECT json_extract('{', '$') AS broken"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error: query: malformed JSON\nhint: The mirror's tables: /);
  });

  it('no SQL, empty SQL, or SQL beside --schema: exit 2', async () => {
    expect((await query([])).code).toBe(2);
    expect((await query(['  '])).stderr).toContain('The SQL is empty.');
    expect((await query(['-'], { input: '' })).stderr).toContain('No SQL on stdin.');
    expect((await query(['--schema', 'SELECT 1'])).code).toBe(2);
  });

  it('a board with no mirror: an error naming `cardboard mirror pull`, and no file made', async () => {
    const file = join(tempDir(), 'none.sqlite');
    const r = await query(['SELECT 1'], { env: { CARDBOARD_MIRROR: file } });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('cardboard mirror pull');
    expect(existsSync(file)).toBe(false);
  });
});
