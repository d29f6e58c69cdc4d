// The first of `cardboard query`'s locks on PostgreSQL: a statement that could write is refused here, before
// anything reaches the server. The server's own locks follow (reader-ops.ts: a read-only session and a read-only
// transaction); this one also stops what a read-only transaction lets through: advisory locks, settings changed
// with set_config, sequences, large objects, a signal to another backend.
//
// Hand-written because the check must see the text exactly as the server's lexer does, and no small, kept
// library tokenizes PostgreSQL's dialect (the full parsers are native builds of the server's own parser, far
// heavier than this): a word is outside quotes and comments only when PostgreSQL reads it so. The rules
// followed are those of PostgreSQL's lexer (scan.l), with `standard_conforming_strings` on, which reader-ops.ts
// sets on the session:
//   - `--` to the end of the line (\n or \r); `/* … */`, which nest;
//   - '…' with '' for a quote; E'…' (e just before the quote) where a backslash also escapes the next character;
//   - "…" a quoted name, "" for a quote inside; U&"…" a name with Unicode escapes (\XXXX, \+XXXXXX);
//   - $tag$ … $tag$ (tag: a name's letters without `$`, or empty), except $1, a parameter;
//   - a name: a letter, `_` or any non-ASCII character, then those, digits and `$`; ASCII letters fold to lower case;
//   - blanks are space, tab, \n, \r, \f and \v only; `;` ends a statement.
import { UsageError } from '../../errors.js';

/** One token of a statement, as the guard needs it: a word (lower case), a quoted name, a string, a `;`, or any other sign. */
export interface Token {
  kind: 'word' | 'name' | 'string' | 'semicolon' | 'other';
  /** A word folded to lower case; a quoted name unescaped; a string's or sign's text as written. */
  text: string;
  /** Where the token starts and ends in the statement's text. */
  start: number;
  end: number;
}

/** The blanks between tokens: PostgreSQL's, no other (a no-break space is part of a name there). */
const BLANK = /[ \t\n\r\f\v]/;
/** Characters that begin a name (unquoted): ASCII letters, `_`, and every non-ASCII character, as PostgreSQL's ident_start. */
const NAME_START = /[A-Za-z_\u0080-\uffff]/;
/** Characters that continue one: those, digits and `$`. */
const NAME_PART = /[A-Za-z0-9_$\u0080-\uffff]/;

/** A statement the lexer could not read to its end (an unclosed quote or comment): refused, nothing run. */
function unclosed(what: string): UsageError {
  return new UsageError(`query has an unclosed ${what}: close it; nothing was run.`);
}

/** The end of a quoted run opened at `start` by `quote`, where a doubled quote is part of it (and, for E'…', a backslash escapes). */
function quotedEnd(sql: string, start: number, quote: string, backslash: boolean, what: string): number {
  let i = start + 1;
  for (;;) {
    if (i >= sql.length) throw unclosed(what);
    const c = sql[i]!;
    if (backslash && c === '\\') i += 2;
    else if (c === quote && sql[i + 1] === quote) i += 2;
    else if (c === quote) return i + 1;
    else i++;
  }
}

/** The end of a `/* … *\/` comment opened at `start`, comments nested inside it included. */
function commentEnd(sql: string, start: number): number {
  let depth = 0;
  let i = start;
  while (i < sql.length) {
    if (sql.startsWith('/*', i)) {
      depth++;
      i += 2;
    } else if (sql.startsWith('*/', i)) {
      depth--;
      i += 2;
      if (depth === 0) return i;
    } else i++;
  }
  throw unclosed('comment (/* without */)');
}

/** A U&"…" name's escapes decoded: \XXXX, \+XXXXXX and \\ (the escape character `escape`). */
function unicodeName(inner: string, escape: string): string {
  let out = '';
  for (let i = 0; i < inner.length; i++) {
    if (inner[i] !== escape) {
      out += inner[i];
    } else if (inner[i + 1] === escape) {
      out += escape;
      i++;
    } else if (inner[i + 1] === '+') {
      out += String.fromCodePoint(parseInt(inner.slice(i + 2, i + 8), 16) || 0xfffd);
      i += 7;
    } else {
      out += String.fromCodePoint(parseInt(inner.slice(i + 1, i + 5), 16) || 0xfffd);
      i += 4;
    }
  }
  return out;
}

/** The tokens of `sql` outside comments and blanks. Throws UsageError for an unclosed quote or comment. */
export function tokenize(sql: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  const push = (kind: Token['kind'], text: string, start: number, end: number) => tokens.push({ kind, text, start, end });
  while (i < sql.length) {
    const c = sql[i]!;
    const start = i;
    if (c === '-' && sql[i + 1] === '-') {
      while (i < sql.length && sql[i] !== '\n' && sql[i] !== '\r') i++;
    } else if (c === '/' && sql[i + 1] === '*') {
      i = commentEnd(sql, i);
    } else if (BLANK.test(c)) {
      i++;
    } else if (c === "'") {
      i = quotedEnd(sql, i, "'", false, "string (' without its closing ')");
      push('string', sql.slice(start, i), start, i);
    } else if (c === '"') {
      i = quotedEnd(sql, i, '"', false, 'quoted name (" without its closing ")');
      push('name', sql.slice(start + 1, i - 1).replace(/""/g, '"'), start, i);
    } else if ((c === 'u' || c === 'U') && sql[i + 1] === '&' && (sql[i + 2] === '"' || sql[i + 2] === "'")) {
      const quote = sql[i + 2]!;
      i = quotedEnd(sql, i + 2, quote, false, quote === '"' ? 'quoted name (" without its closing ")' : "string (' without its closing ')");
      const inner = sql.slice(start + 3, i - 1).replaceAll(quote + quote, quote);
      if (quote === "'") {
        push('string', sql.slice(start, i), start, i);
      } else {
        const escape = uescapeAfter(sql, i);
        push('name', unicodeName(inner, escape ?? '\\'), start, i);
      }
    } else if (c === '$' && /[0-9]/.test(sql[i + 1] ?? '')) {
      i++;
      while (i < sql.length && /[0-9]/.test(sql[i]!)) i++;
      push('other', sql.slice(start, i), start, i);
    } else if (c === '$') {
      const tag = /^\$(?:[A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*)?\$/.exec(sql.slice(i))?.[0];
      if (tag === undefined) {
        i++;
        push('other', c, start, i);
      } else {
        const close = sql.indexOf(tag, i + tag.length);
        if (close < 0) throw unclosed(`dollar-quoted string (${tag} without its closing ${tag})`);
        i = close + tag.length;
        push('string', sql.slice(start, i), start, i);
      }
    } else if (NAME_START.test(c)) {
      while (i < sql.length && NAME_PART.test(sql[i]!)) i++;
      const word = sql.slice(start, i);
      if ((word === 'e' || word === 'E') && sql[i] === "'") {
        i = quotedEnd(sql, i, "'", true, "string (E' without its closing ')");
        push('string', sql.slice(start, i), start, i);
      } else {
        push('word', word.replace(/[A-Z]+/g, (letters) => letters.toLowerCase()), start, i);
      }
    } else if (c === ';') {
      i++;
      push('semicolon', c, start, i);
    } else {
      i++;
      push('other', c, start, i);
    }
  }
  return tokens;
}

/** The escape character a `UESCAPE 'c'` after position `at` names, if one follows. */
function uescapeAfter(sql: string, at: number): string | undefined {
  return /^(?:\s|--[^\n\r]*)*uescape\s*'([^'])'/i.exec(sql.slice(at))?.[1];
}

/** The first words a statement may have: those that read. */
const READ_VERBS = new Set(['select', 'with', 'values', 'table']);

/**
 * Words that make a statement write wherever they stand (a data-modifying WITH, SELECT … INTO), or that begin
 * a statement that writes or changes the session or the transaction. A column so named is written in double
 * quotes ("update"), which the guard lets through.
 */
const WRITE_WORDS = new Set([
  'insert', 'update', 'delete', 'merge', 'into', 'copy', 'create', 'drop', 'alter', 'truncate', 'grant', 'revoke',
  'lock', 'call', 'do', 'set', 'reset', 'execute', 'prepare', 'deallocate', 'listen', 'notify', 'unlisten', 'vacuum',
  'analyze', 'analyse', 'cluster', 'reindex', 'refresh', 'discard', 'checkpoint', 'begin', 'commit', 'rollback',
  'savepoint', 'abort',
]);

/**
 * Server functions that act although a read-only transaction allows them: locks, settings, sequences, large
 * objects, files, other backends, replication, notifications, and those that run SQL given as text. A name
 * ending in `*` stands for every name it begins.
 */
const EFFECT_FUNCTIONS = [
  'pg_advisory_*', 'pg_try_advisory_*', 'set_config', 'nextval', 'setval', 'lo_*', 'loread', 'lowrite', 'dblink*',
  'pg_read_*', 'pg_ls_*', 'pg_stat_file', 'pg_file_*', 'pg_stat_reset*', 'pg_stat_statements_reset', 'pg_terminate_backend', 'pg_cancel_backend',
  'pg_signal_backend', 'pg_reload_conf', 'pg_rotate_logfile', 'pg_log_backend_memory_contexts', 'pg_switch_wal',
  'pg_create_*', 'pg_drop_replication_slot', 'pg_copy_*', 'pg_replication_*', 'pg_logical_*', 'pg_backup_*',
  'pg_start_backup', 'pg_stop_backup', 'pg_promote', 'pg_wal_replay_*', 'pg_notify', 'pg_truncate_*',
  'pg_import_system_collations', 'txid_current', 'pg_current_xact_id', 'query_to_xml*', 'cursor_to_xml*',
];

/** Whether `name` (a function's, any case) is one of EFFECT_FUNCTIONS. */
function hasEffects(name: string): boolean {
  const lower = name.toLowerCase();
  return EFFECT_FUNCTIONS.some((f) => (f.endsWith('*') ? lower.startsWith(f.slice(0, -1)) : lower === f));
}

/** The row lock FOR … at `body[i]` (FOR UPDATE, FOR NO KEY UPDATE, FOR SHARE, FOR KEY SHARE), or undefined. */
function rowLock(body: readonly Token[], i: number): string | undefined {
  if (body[i]?.kind !== 'word' || body[i]!.text !== 'for') return undefined;
  const words: string[] = [];
  for (const token of body.slice(i, i + 4)) {
    if (token.kind !== 'word') return undefined;
    words.push(token.text.toUpperCase());
    if (token.text === 'update' || token.text === 'share') return words.join(' ');
    if (words.length > 1 && token.text !== 'no' && token.text !== 'key') return undefined;
  }
  return undefined;
}

const REFUSED = 'nothing was run.';

/**
 * Check `sql` for `cardboard query` on PostgreSQL: exactly one statement, one that reads (its first word SELECT,
 * WITH, VALUES or TABLE, after any opening parentheses), with no word that writes and no call of a function that
 * acts, outside quotes and comments. Returns the statement's text without what follows its last token (a `;`,
 * comments), ready to be the query of a cursor; throws UsageError (exit 2) otherwise.
 */
export function guardStatement(sql: string): string {
  // The server reads a statement's text up to a NUL: what follows one would go unread, or be read otherwise.
  if (sql.includes('\0')) throw new UsageError(`query holds a NUL character, which PostgreSQL cannot read: remove it; ${REFUSED}`);
  const tokens = tokenize(sql);
  const statements = countOf(tokens);
  if (statements === 0) throw new UsageError('query is empty: give one SQL statement, e.g. "SELECT count(*) FROM cards".');
  if (statements > 1) throw new UsageError(`query holds ${statements} statements: give one at a time; ${REFUSED}`);
  const body = tokens.filter((t) => t.kind !== 'semicolon');
  const first = body.find((t) => !(t.kind === 'other' && t.text === '('));
  const verb = first?.kind === 'word' ? first.text : undefined;
  if (verb === undefined || !READ_VERBS.has(verb)) {
    const shown = first === undefined ? 'such' : first.kind === 'word' ? first.text.toUpperCase() : sql.slice(first.start, first.end);
    throw new UsageError(`query is read-only: ${shown} statements are refused; ${REFUSED}`, { hint: 'Only a SELECT, WITH … SELECT, VALUES or TABLE statement is run.' });
  }
  body.forEach((token, i) => {
    const lock = rowLock(body, i);
    if (lock !== undefined) throw new UsageError(`query is read-only: ${lock} is refused (it locks rows); ${REFUSED}`);
    if (token.kind === 'other' && /^\$\d+$/.test(token.text)) {
      throw new UsageError(`query has a parameter (${token.text}), which nothing gives a value: write the value into the SQL; ${REFUSED}`);
    }
    if (token.kind === 'word' && WRITE_WORDS.has(token.text)) {
      throw new UsageError(`query is read-only: ${token.text.toUpperCase()} is refused, even inside a ${verb.toUpperCase()}; ${REFUSED}`);
    }
    if ((token.kind === 'word' || token.kind === 'name') && hasEffects(token.text)) {
      throw new UsageError(`query is read-only: ${token.text}() is refused (it acts on the server); ${REFUSED}`);
    }
  });
  return sql.slice(body[0]!.start, body.at(-1)!.end);
}

/** The number of statements in `tokens`: runs of tokens between `;`s that hold any. */
function countOf(tokens: readonly Token[]): number {
  let count = 0;
  let content = false;
  for (const token of tokens) {
    if (token.kind === 'semicolon') {
      if (content) count++;
      content = false;
    } else content = true;
  }
  return content ? count + 1 : count;
}
