import type { Command } from 'commander';
import type { Context, ContextRef } from '../../context.js';
import { nounSummary } from '../nouns.js';
import { printTable } from '../../io/table.js';
import { tsvRow } from '../../io/text.js';
import { writeChunk, writeJson } from '../../io/write.js';
import type { Field } from '../../spec-types.js';

/** What `schema` prints. */
export interface SchemaOptions {
  json: boolean;
  refresh: boolean;
}

const EXAMPLES = `
Field names are case-sensitive (spec 2.2): \`card put\` and \`import\` check every key against them.
The schema is cached per board for a short time; --refresh fetches it again.
Piped without --json: tab-separated rows under a header line.

Examples:
  $ cardboard schema
  $ cardboard schema --json | jq -r '.[].name'
  $ cardboard schema --refresh | cut -f1`;

/** Define `schema` under `parent`; `run` is replaceable so parse tests can spy on the options. */
export function schemaCommand(parent: Command, ctx: ContextRef, run = runSchema): Command {
  return parent
    .command('schema')
    .description(nounSummary('schema'))
    .option('--json', "print the server's array of fields as JSON")
    .option('--refresh', 'skip the cached copy and ask the server')
    .addHelpText('after', EXAMPLES)
    .action(async (flags: { json?: boolean; refresh?: boolean }) => {
      await run(ctx(), { json: flags.json ?? false, refresh: flags.refresh ?? false });
    });
}

/**
 * name, uuid, then every other property in order of first appearance. Spec 2.3 says a field carries
 * a UUID but not under which key, so `uuid` is a column only when the server uses that key.
 */
function schemaColumns(fields: readonly Field[]): string[] {
  const columns = ['name'];
  if (fields.some((f) => Object.hasOwn(f, 'uuid'))) columns.push('uuid');
  for (const field of fields) for (const key of Object.keys(field)) if (!columns.includes(key)) columns.push(key);
  return columns;
}

/** Fetch the schema (spec 4.2) and print it as a table on a TTY, tab-separated piped, or JSON. */
export async function runSchema(ctx: Context, opts: SchemaOptions): Promise<void> {
  const api = await ctx.api();
  const fields = await api.schema({ refresh: opts.refresh });
  if (opts.json) return writeJson(ctx.stdout, fields);
  const columns = schemaColumns(fields);
  const rows = fields.map((f) => columns.map((c) => f[c]));
  // A uuid cut short is no use: left out, with a note, when the terminal is too narrow for it.
  if (ctx.stdout.isTTY) return printTable(ctx, columns, rows, { keep: ['uuid'], omittedHint: 'see every property with --json' });
  await writeChunk(ctx.stdout, tsvRow(columns));
  for (const row of rows) await writeChunk(ctx.stdout, tsvRow(row));
}
