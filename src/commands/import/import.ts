import type { Command } from 'commander';
import type { Context } from '../../context.js';
import { runImport } from './execute.js';
import { type ImportOptions, toOptions } from './options.js';

const HELP = `
Every CSV header must match a board field exactly, case included (the service silently drops any
other key, spec 4.3): by its own name, --map, --map-file, or --skip-column. On a terminal cardboard
asks for the ones that do not; otherwise it stops (exit 2) and prints the --map flags to add.
An "_id" column (or --id-column) updates cards; --match-on Field finds them by a natural key.

Rate: without the global --rate, cardboard learns the service's limit from its 429 answers.
Resume: a journal next to the file (.cardboard-journal/, keyed by the file's SHA-256, the board and
the mapping and options) records finished rows; running the same command again skips them, and a
run that reaches the end deletes it. --restart ignores it. Reading stdin (-) keeps no journal unless
--journal is given. One run per file and board at a time: a second one stops (exit 1).

Examples:
  $ cardboard import cards.csv --map "Assignee=Owner" --results ids.csv --rejects fix-me.csv
  $ cardboard import cards.csv --map "Assignee=Owner" --match-on Name --dry-run
  $ cat cards.csv | cardboard import - --map-file cards.map.json --rate 2/s --json`;

const collect = (value: string, previous: string[]) => [...previous, value];

/** Define `import` under `parent`; `run` is replaceable so parse tests can spy on the options. */
export function importCommand(parent: Command, ctx: Context, run: (ctx: Context, opts: ImportOptions) => Promise<void> = runImport): Command {
  return parent
    .command('import')
    .description('Import a CSV file as cards: exact mapping, rate-aware, resumable')
    .argument('<file>', 'the CSV file, or - for stdin')
    .option('--map <header=field>', 'send a CSV column as this field (repeatable)', collect, [])
    .option('--map-file <file.json>', 'a JSON mapping {"CSV header": "Field" | null to skip}')
    .option('--skip-column <header>', 'do not send this column (repeatable)', collect, [])
    .option('--match-on <field>', 'update the card whose field has the same value (upsert on a natural key)')
    .option('--id-column <header>', 'the column holding card ids (default: a column named _id)')
    .option('--dry-run', 'read, map and check every row; send nothing (only GETs)')
    .option('--concurrency <n>', 'requests in flight at once', '8')
    .option('--give-up-after <duration>', 'stop when a row has met nothing but 429s for this long, e.g. 30m or 1h', '15m')
    .option('--journal <file>', 'where to keep the resume journal')
    .option('--restart', 'ignore the journal: send every row again')
    .option('--results <file>', 'write line,state,_id,message for every row (CSV)')
    .option('--rejects <file>', 'write rejected and uncertain rows in the input columns, plus a reason (CSV)')
    .option('--delimiter <char>', 'field delimiter (default: detected among , ; and tab)')
    .option('--encoding <name>', 'file encoding, e.g. latin1, utf-16le (default utf-8)')
    .option('--empty <omit|send>', 'empty cells: omit them, or send them as ""', 'omit')
    .option('--allow-unknown', 'send columns that match no field under their own name (Create Fields on)')
    .option('--input-format <format>', 'csv, tsv, ndjson or json (default: from the extension; stdin: csv)')
    .option('--type <field=type>', 'send a CSV column typed: number, boolean, json or string (repeatable)', collect, [])
    .option('--force', 'with --match-on, send rows whose values already equal the card\'s')
    .option('--json', 'print the summary as JSON on stdout')
    .addHelpText('after', HELP)
    .action(async (file: string, flags: Record<string, unknown>) => {
      await run(ctx, toOptions(file, flags));
    });
}
