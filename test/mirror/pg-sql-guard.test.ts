// The guard of `cardboard query` on PostgreSQL (src/mirror/pg/sql-guard.ts): its tokenizer reads quotes and
// comments as PostgreSQL's lexer does (checked against the server where one runs), and what it refuses.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { guardStatement, tokenize } from '../../src/mirror/pg/sql-guard.js';
import { PG_REQUIRED, PG_SKIPPED, pgClient } from '../helpers/postgres.js';

/** The message `guardStatement(sql)` refuses with, or undefined when it lets it through. */
function refusal(sql: string): string | undefined {
  try {
    guardStatement(sql);
    return undefined;
  } catch (err) {
    if (err instanceof UsageError) return err.message;
    throw err;
  }
}

/** Text that SQL can hold (no NUL), any other character included. */
const text = fc.string({ unit: 'grapheme', maxLength: 40 }).map((s) => s.replace(/\0/g, ''));

/** The ways a string literal is written: each is text → SQL, read back by the server as the text. */
const LITERALS: Record<string, (s: string) => string> = {
  standard: (s) => `'${s.replace(/'/g, "''")}'`,
  escape: (s) => `E'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`,
  dollar: (s) => {
    let tag = 'q';
    while (`${s}$`.includes(`$${tag}$`) || s.endsWith(`$${tag}`)) tag += 'q';
    return `$${tag}$${s}$${tag}$`;
  },
  unicode: (s) => `U&'${s.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`,
};

const WRITE_WORDS = ['insert', 'update', 'delete', 'merge', 'into', 'copy', 'create', 'drop', 'alter', 'truncate', 'grant', 'lock', 'set', 'do', 'call'];

/** A word with each ASCII letter in either case. */
const anyCase = (word: string) => fc.array(fc.boolean(), { minLength: word.length, maxLength: word.length }).map((up) => [...word].map((c, i) => (up[i] ? c.toUpperCase() : c)).join(''));

describe('tokenize', () => {
  it('reads strings, names, comments and dollar quotes as PostgreSQL does', () => {
    const kinds = (sql: string) => tokenize(sql).map((t) => `${t.kind}:${t.text}`);
    expect(kinds(`SELECT E'a\\'b', 'c\\', "x""y" -- z\r1`)).toEqual(["word:select", "string:E'a\\'b'", 'other:,', "string:'c\\'", 'other:,', 'name:x"y', 'other:1']);
    expect(kinds('/* a /* b */ c */ $1 $a$ $ $a$ a$b$ $$;$$;')).toEqual(['other:$1', 'string:$a$ $ $a$', 'word:a$b$', 'string:$$;$$', 'semicolon:;']);
    expect(kinds(`U&"d\\0061t\\+000061" U&"d!0061" UESCAPE '!'`)).toEqual(['name:data', 'name:da', 'word:uescape', "string:'!'"]);
    expect(kinds('DÉLETE Ünion')).toEqual(['word:dÉlete', 'word:Ünion']);
    // A no-break space is no blank to PostgreSQL: part of the name.
    expect(kinds('x\u00a0delete\v1')).toEqual(['word:x\u00a0delete', 'other:1']);
  });

  it('finds no write word inside a literal, whatever it holds', () => {
    fc.assert(
      fc.property(text, fc.constantFrom(...Object.keys(LITERALS)), (s, kind) => {
        expect(refusal(`SELECT ${LITERALS[kind]!(s)} AS x`)).toBeUndefined();
        expect(tokenize(`SELECT ${LITERALS[kind]!(s)} AS x`).map((t) => t.kind)).toEqual(['word', 'string', 'word', 'word']);
      }),
    );
  });

  it('finds no write word inside a comment or a quoted name', () => {
    fc.assert(
      fc.property(text, (s) => {
        const inner = s.replace(/\/\*|\*\//g, '');
        expect(refusal(`SELECT 1 /* ${inner} /* ${inner} */ DELETE */ AS x -- ${s.replace(/[\r\n]/g, '')}`)).toBeUndefined();
        expect(refusal(`SELECT 1 AS "${s.replace(/"/g, '""') || 'x'}"`)).toBeUndefined();
      }),
    );
  });
});

describe('guardStatement', () => {
  it('refuses a write word outside quotes, in any case, wherever it stands', () => {
    fc.assert(
      fc.property(fc.constantFrom(...WRITE_WORDS).chain(anyCase), text, fc.constantFrom('', ' ', '\n', '/**/', '--x\n', '--x\r'), (word, s, gap) => {
        const sql = `WITH a AS (SELECT ${LITERALS.standard!(s)})${gap}${word}${gap || ' '}SELECT 1`;
        expect(refusal(sql)).toMatch(/is refused|statements are refused/);
      }),
    );
  });

  it('counts statements as the server does: a ; inside quotes or comments ends none', () => {
    fc.assert(
      fc.property(fc.array(text, { minLength: 1, maxLength: 4 }), (parts) => {
        const statements = parts.map((s) => `SELECT ${LITERALS.dollar!(s)} /* ; */ -- ;\n`);
        const message = refusal(statements.join(';'));
        if (parts.length === 1) expect(message).toBeUndefined();
        else expect(message).toBe(`query holds ${parts.length} statements: give one at a time; nothing was run.`);
      }),
    );
  });

  it('lets through the one statement, without what follows it', () => {
    expect(guardStatement(' -- c\n SELECT 1 ; -- d')).toBe('SELECT 1');
    expect(guardStatement('(VALUES (1))')).toBe('(VALUES (1))');
    expect(guardStatement('TABLE cards')).toBe('TABLE cards');
  });

  it('refuses a statement that does not read, a row lock, and a function that acts', () => {
    expect(refusal('EXPLAIN ANALYZE SELECT 1')).toBe('query is read-only: EXPLAIN statements are refused; nothing was run.');
    expect(refusal('SELECT 1 FOR SHARE')).toBe('query is read-only: FOR SHARE is refused (it locks rows); nothing was run.');
    expect(refusal(`SELECT U&"pg\\005fadvisory\\005flock"(1)`)).toBe('query is read-only: pg_advisory_lock() is refused (it acts on the server); nothing was run.');
    expect(refusal('SELECT pg_catalog.PG_TRY_ADVISORY_LOCK(1)')).toMatch(/pg_try_advisory_lock\(\) is refused/);
    expect(refusal("SELECT lo_import('/etc/passwd')")).toMatch(/lo_import\(\) is refused/);
    expect(refusal("SELECT 'x")).toBe("query has an unclosed string (' without its closing '): close it; nothing was run.");
    expect(refusal('SELECT $a$ x')).toMatch(/unclosed dollar-quoted string/);
    expect(refusal('SELECT substring(_id from 1 for 2), pg_sleep(0) FROM cards')).toBeUndefined();
  });
});

describe.skipIf(PG_SKIPPED !== undefined && !PG_REQUIRED)('tokenize and the server', () => {
  it('reads each literal to the same text as the server', async () => {
    const client = await pgClient();
    try {
      await client.query('SET standard_conforming_strings = on');
      const samples = fc.sample(fc.tuple(text, fc.constantFrom(...Object.keys(LITERALS))), 200);
      for (const [s, kind] of samples) {
        const sql = `SELECT ${LITERALS[kind]!(s)} AS x /* ; /* ; */ */ -- ;`;
        expect(refusal(sql)).toBeUndefined();
        const { rows } = await client.query<{ x: string }>(guardStatement(sql));
        expect(rows[0]!.x).toBe(s);
      }
    } finally {
      await client.end();
    }
  });
});
