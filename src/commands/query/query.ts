import { type Command, Option } from 'commander';
import type { Context, ContextRef } from '../../context.js';
import { didYouMean } from '../../did-you-mean.js';
import { PartialError, UsageError } from '../../errors.js';
import { readStdin } from '../../io/input.js';
import { createRecordWriter, defaultFormat, FORMATS, type Format } from '../../io/records.js';
import { createStatus } from '../../io/status.js';
import { groupDigits } from '../../io/text.js';
import { mirrorPlace } from '../../mirror/open.js';
import { MAX_TABLE_ROWS } from '../card/list.js';
import { type RecordFlags, recordChoice } from '../card/record-flags.js';
import { selectedMirrorBoard } from '../mirror/open-board.js';
import { nounSummary } from '../nouns.js';
import { distinctNames, rowRecord, type ValueNotes, valueNoteLines } from './rows.js';
import { SCHEMA_SQL } from '../../mirror/reader.js';
import { startStatement, type StatementThread } from './thread.js';

/** What `query` runs and how it prints the rows. */
export interface QueryOptions {
  /** The statement as given; `-`: read it from stdin. Undefined with `schema`. */
  sql?: string;
  /** List the mirror's tables and views with their columns instead. */
  schema: boolean;
  /** Undefined: table on a TTY, ndjson piped. */
  format?: Format;
  /** Result columns to keep, in this order. */
  fields?: string[];
}

const EXAMPLES = `
Runs one SQL statement over the selected board's mirror (a SQLite file that \`cardboard mirror pull\`
fills, or the PostgreSQL database a postgres:// CARDBOARD_MIRROR names) and makes no request. Only
statements that read are run: INSERT, UPDATE, DELETE, DROP, ATTACH, a PRAGMA that sets, VACUUM INTO or
several statements at once are refused (exit 2) and change nothing. On PostgreSQL the statement runs in
a read-only transaction, and one that could write or lock (SELECT ... INTO, a WITH that deletes, FOR
UPDATE, pg_advisory_lock(), set_config(), nextval()) is refused before it reaches the server.
- in place of the SQL reads it from stdin (\`cardboard query - < report.sql\`).

Tables: cards (one row per card: _id, and body, the card's JSON as the service sent it), the view
card_fields (one column per field of the board, named exactly as the field: quote a name with a space
or other sign, "Due date"), pulls and deliveries; --schema lists every table and view with its columns.
On PostgreSQL the same names show the selected board's rows, body is jsonb (body->>'Status'), and json,
times and a numeric that a JSON number cannot hold exactly print as text.
Rows print as \`card list\` prints cards: a table on a terminal (at most ${groupDigits(MAX_TABLE_ROWS)} rows), NDJSON piped,
or --format; a row is an object keyed by column name (a repeated name gets _2, _3, ...), with integers,
reals, text and null as JSON values and blobs as base64 text.

Examples:
  $ cardboard query "SELECT json_extract(body,'$.Status') AS status, count(*) FROM cards GROUP BY 1"
  $ cardboard query "SELECT _id, Name FROM card_fields WHERE Status = 'Open'" --format csv > open.csv
  $ cardboard query --schema`;

const splitFields = (value: string, previous: string[] = []) => [...previous, ...value.split(',').map((f) => f.trim()).filter(Boolean)];

/** Define `query` under `parent`; `run` is replaceable so parse tests can spy on the options. */
export function queryCommand(parent: Command, ctx: ContextRef, run = runQuery): Command {
  return parent
    .command('query')
    .description(nounSummary('query'))
    .usage('[options] <sql>')
    .argument('[sql]', 'one statement that reads (SELECT, WITH ... SELECT); - reads it from stdin')
    .option('--schema', "list the mirror's tables and views with their columns")
    .addOption(new Option('--format <format>', 'output format (default: table on a terminal, ndjson piped)').choices(FORMATS))
    .option('--json', 'print a JSON array of rows (the same as --format json)')
    .option('--fields <columns>', 'comma-separated result columns to show, in this order', splitFields)
    .addHelpText('after', EXAMPLES)
    .action(async (sql: string | undefined, flags: RecordFlags & { schema?: boolean }) => {
      const { format, fields } = recordChoice(flags);
      if (flags.schema && sql !== undefined) throw new UsageError('--schema lists the tables and takes no SQL');
      if (!flags.schema && sql === undefined) {
        throw new UsageError('No SQL given.', { hint: 'cardboard query "SELECT ..." (- reads it from stdin); --schema lists the tables and their columns.' });
      }
      await run(ctx(), { sql, schema: flags.schema ?? false, format, fields });
    });
}

/** The statement to run: --schema's, the argument, or stdin's text for `-`. */
async function statementText(ctx: Context, opts: QueryOptions): Promise<string> {
  if (opts.schema) return SCHEMA_SQL;
  const sql = opts.sql === '-' ? await readStdin(ctx) : opts.sql!;
  if (sql.trim() === '') throw new UsageError(opts.sql === '-' ? 'No SQL on stdin.' : 'The SQL is empty.');
  return sql;
}

/**
 * Run the statement over the selected board's mirror (read-only) and print its rows. The statement runs in a
 * thread of its own (thread.ts), so Ctrl-C and SIGTERM stop the run at once however long SQLite computes.
 */
export async function runQuery(ctx: Context, opts: QueryOptions): Promise<void> {
  const sql = await statementText(ctx, opts);
  const board = await selectedMirrorBoard(ctx);
  // A terminal table stops at MAX_TABLE_ROWS: one row more tells that there are more.
  const table = (opts.format ?? defaultFormat(ctx)) === 'table' && ctx.stdout.isTTY === true;
  const statement = await startStatement(mirrorPlace(ctx.env, board), board, sql, table ? MAX_TABLE_ROWS + 1 : undefined, ctx.signal);
  try {
    await printRows(ctx, statement, opts);
  } finally {
    await statement.stop(ctx.signal);
  }
}

/**
 * Write the rows as records. Every format streams, row by row, but the table on a terminal, which holds its
 * rows (its widths depend on them all) and so stops at MAX_TABLE_ROWS with a PartialError (exit 3), as
 * `card list --all` does.
 */
async function printRows(ctx: Context, result: StatementThread, opts: QueryOptions): Promise<void> {
  const status = createStatus(ctx);
  const format = opts.format ?? defaultFormat(ctx);
  const { names, renamed } = distinctNames(result.columns);
  if (renamed.length > 0) status.info(`columns with the same name are renamed: ${renamed.map(([from, to]) => `${from} → ${to}`).join(', ')}`);
  const columns = opts.fields === undefined ? names : checkedFields(opts.fields, names);
  const writer = createRecordWriter(ctx, { format, columns, project: opts.fields !== undefined });
  const table = format === 'table' && ctx.stdout.isTTY === true;
  const notes: ValueNotes = { blobs: new Set(), bigIntegers: new Set() };
  let count = 0;
  let cut = false;
  rows: for await (const batch of result.batches()) {
    for (const row of batch) {
      if (table && count === MAX_TABLE_ROWS) {
        cut = true;
        break rows;
      }
      await writer.write(rowRecord(row, names, notes));
      count++;
    }
  }
  await writer.end(table ? `${groupDigits(count)} ${count === 1 ? 'row' : 'rows'}${cut ? ' (the first; there are more)' : ''}` : undefined);
  if (table && count === 0) status.info('no rows');
  for (const line of valueNoteLines(notes)) status.info(line);
  if (cut) {
    const max = groupDigits(MAX_TABLE_ROWS);
    throw new PartialError(`The terminal table stops at ${max} rows, and the result has more; the first ${max} are shown.`, {
      hint: 'Print every row with --format ndjson, csv or json (they stream), or add a LIMIT to the SQL.',
    });
  }
}

/** --fields checked against the result's columns (exact names), with the closest one for a name not there. */
function checkedFields(fields: string[], names: string[]): string[] {
  const unknown = fields.find((f) => !names.includes(f));
  if (unknown === undefined) return fields;
  throw new UsageError(`--fields: the result has no column ${JSON.stringify(unknown)}`, {
    suggestion: didYouMean(unknown, names),
    hint: `Its columns: ${names.join(', ')}.`,
  });
}
