// `cardboard query` on a real terminal: a table of the rows with their count, the mirror's hostile values
// escaped, and the table stopped at 2,000 rows (exit 3) as `card list --all`'s is.
import { beforeAll, describe, expect, it } from 'vitest';
import { runOnPty } from '../helpers/pty.js';
import { filledMirror } from './mirror-fixture.js';

let env: Record<string, string>;
beforeAll(async () => {
  env = (await filledMirror()).env;
});

describe('cardboard query on a terminal', () => {
  it('a table with a row count; escape sequences in a card stay escaped', async () => {
    const r = await runOnPty(['query', 'SELECT _id, Name, Status FROM card_fields ORDER BY _id'], env);
    expect(r.code, r.screen).toBe(0);
    expect(r.screen).toMatch(/_id\s+│?\s*Name\s+│?\s*Status/);
    expect(r.screen).toMatch(/c1\s+│?\s*Fix login\s+│?\s*Open/);
    expect(r.screen).toContain('\\e[31mred\\e]0;owned\\a');
    expect(r.screen).not.toContain('\x1b[31m');
    expect(r.screen).not.toContain('\x1b]0;');
    expect(r.screen).not.toContain('\x07');
    expect(r.screen).toContain('3 rows');
  });

  it('a column named with escape sequences is escaped in the header and in the note on stderr', async () => {
    const r = await runOnPty(['query', 'SELECT 1 AS "\x1b[2Jx", 2 AS "\x1b[2Jx"'], env);
    expect(r.code, r.screen).toBe(0);
    expect(r.screen).not.toContain('\x1b[2J');
    expect(r.screen).toContain('\\e[2Jx');
    expect(r.screen).toContain('\\e[2Jx_2');
    expect(r.screen).toContain('columns with the same name are renamed');
  });

  it('no rows: no table, "no rows" on stderr', async () => {
    const r = await runOnPty(['query', "SELECT _id FROM cards WHERE _id = 'none'"], env);
    expect(r.code, r.screen).toBe(0);
    expect(r.screen.trim()).toBe('no rows');
  });

  it('more rows than a terminal table holds: the first 2,000, then exit 3 pointing to --format', async () => {
    // After its 2,500 rows the statement would search for ever: the run reads no further than it shows.
    const r = await runOnPty(['query', 'WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT i AS number FROM n WHERE i <= 2500 OR i < 0'], env);
    expect(r.code, r.screen.slice(-2000)).toBe(3);
    expect(r.screen.match(/^\s*\d+\s*\r?$/gm)).toHaveLength(2000);
    expect(r.screen).toContain('error: The terminal table stops at 2,000 rows, and the result has more; the first 2,000 are shown.');
    expect(r.screen).toContain('--format ndjson, csv or json');
  });
});
