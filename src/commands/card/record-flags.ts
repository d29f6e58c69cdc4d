import { type Command, Option } from 'commander';
import type { Api } from '../../api/types.js';
import { UsageError } from '../../errors.js';
import { FORMATS, type Format } from '../../io/records.js';
import { checkKeysAgainstBoard, unknownKeysError } from '../../schema/check.js';
import type { Field } from '../../spec-types.js';

/** The output flags of the card readers (`card list`, `card get`) as commander hands them over. */
export interface RecordFlags {
  format?: Format;
  json?: boolean;
  fields?: string[];
}

/** What the output flags ask for: the format (undefined: table on a terminal, ndjson piped) and the fields to keep. */
interface RecordChoice {
  format?: Format;
  fields?: string[];
}

const splitFields = (value: string, previous: string[] = []) => [...previous, ...value.split(',').map((f) => f.trim()).filter(Boolean)];

/** Add `--format`, `--json` (described by `json`: what it prints, the same as --format json) and `--fields` to a reader. */
export function recordOptions(command: Command, json: string): Command {
  return command
    .addOption(new Option('--format <format>', 'output format (default: table on a terminal, ndjson piped)').choices(FORMATS))
    .option('--json', `${json} (the same as --format json)`)
    .option('--fields <names>', 'comma-separated field names to show, in this order', splitFields);
}

/** The format and fields the flags ask for; a UsageError for an empty --fields or --json beside another --format. */
export function recordChoice(flags: RecordFlags): RecordChoice {
  if (flags.fields?.length === 0) throw new UsageError('--fields needs at least one field name');
  if (flags.json && flags.format !== undefined && flags.format !== 'json') {
    throw new UsageError(`--json and --format ${flags.format} cannot be used together`, { hint: '--json is --format json: pass one of them.' });
  }
  return { format: flags.json ? 'json' : flags.format, fields: flags.fields };
}

/** The columns: `--fields` checked against the schema (exactly, spec 2.2), else `_id` plus the schema's order. */
export async function resolveColumns(api: Api, fields: string[] | undefined): Promise<string[]> {
  if (fields === undefined) return columnsOf(undefined, await api.schema());
  const { unknown } = await checkKeysAgainstBoard(api, fields);
  if (unknown.length > 0) throw unknownKeysError(unknown, ' --fields takes exact field names.');
  return columnsOf(fields, []);
}

/** The columns of checked `--fields` (with `_id` first unless listed), or without them `_id` and the schema's fields in order. */
export function columnsOf(fields: string[] | undefined, schema: readonly Field[]): string[] {
  if (fields === undefined) return ['_id', ...schema.map((f) => f.name)];
  return fields.includes('_id') ? fields : ['_id', ...fields];
}

/** The line for keys a card had that the columns (the board's fields) leave out. Spec 2.2: a card may hold keys that are not fields (createdAt...), so it is a note. */
export function leftOutNote(leftOut: Iterable<string>): string {
  return `not shown (not fields of the board): ${[...leftOut].join(', ')}; use --format json to see them, or \`cardboard schema --refresh\` if a field was just added`;
}
