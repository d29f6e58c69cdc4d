import { type Command, Option } from 'commander';
import type { Context, ContextRef } from '../../context.js';
import type { ImportPlan } from '../../import/plan.js';
import { DEFAULT_MAX_AGE_MS } from '../../mirror/fresh.js';
import { nounSummary } from '../nouns.js';
import { runImport } from './execute.js';
import { DEFAULT_CONCURRENCY, DEFAULT_GIVE_UP_AFTER, planFromFlags } from './plan-from-flags.js';

const HELP = `
Input: CSV (default), TSV (.tsv), NDJSON (.ndjson, .jsonl) or a JSON array (.json), by extension or
--input-format; stdin (-) is CSV unless --input-format says otherwise. JSON values keep their types;
--type Field=number|boolean|json|string types CSV cells.

Every column (of NDJSON and JSON: every key) must match a board field exactly, case included (the
service silently drops any other key, spec 4.3): by its own name, --map, --map-file, or --skip-column.
On a terminal cardboard asks for the ones that do not; otherwise it stops (exit 2) and prints the
flags to add. An "_id" column (or --id-column) updates cards; --match-on Field finds them by a natural
key and sends only the rows whose values differ from their card's (--force sends all).

Exit 3 when rows are rejected or uncertain: the first reasons on stderr, all of them in --rejects.

Order: rows are sent one at a time, each card created before the next row is sent, so the board gets
the file's order; under the service's 120 requests a minute that is as fast as --concurrency 8.
Rate: without the global --rate, cardboard learns the service's limit from its 429 answers.
Memory: a journal next to the file (.cardboard-journal/, one per input path and board) records what
each row did. The same command again resumes a run that was cut off, and sends nothing for rows an
earlier run imported (unless the board no longer holds their cards); --again sends those as new cards,
--restart forgets the whole journal. One import per board and user at a time, whatever the environment.
A --rejects file is the next input as it is (its _cardboard_reason column is never sent).

Examples:
  $ cardboard import cards.csv --map "Assignee=Owner" --results ids.csv --rejects fix-me.csv
  $ cardboard import cards.csv --map "Assignee=Owner" --match-on Name --dry-run
  $ cardboard card list --all --format ndjson > cards.ndjson && cardboard import cards.ndjson --skip-column _id --dry-run`;

const collect = (value: string, previous: string[]) => [...previous, value];

/** Define `import` under `parent`: its flags become one ImportPlan; `run` is replaceable so parse tests can spy on the plan. */
export function importCommand(parent: Command, ctx: ContextRef, run: (ctx: Context, plan: ImportPlan) => Promise<void> = runImport): Command {
  return parent
    .command('import')
    .description(nounSummary('import'))
    .argument('<file>', 'the input file, or - for stdin')
    .option('--map <header=field>', 'send a column (JSON input: a key) as this field (repeatable)', collect, [])
    .option('--map-file <file.json>', 'a JSON mapping {"column or key": "Field" | null to skip}')
    .option('--skip-column <header>', 'do not send this column or key (repeatable)', collect, [])
    .option('--match-on <field>', 'update the card whose field has the same value (upsert on a natural key)')
    .option('--mirror', 'with --match-on: take its index from the board\'s mirror when it is fresh (no page read); else read the pages')
    .option('--max-age <duration>', `with --mirror: how old the mirror may be to be used, e.g. 5m or 1h (default: ${DEFAULT_MAX_AGE_MS / 60_000}m)`)
    .option('--id-column <header>', 'the column or key holding card ids (default: one named _id)')
    .option('--dry-run', 'read, map and check every row; send nothing (only GETs); exit 3 if a run would reject rows')
    .option('--concurrency <n>', 'requests in flight at once; more than 1 is faster against a server without a rate limit, and cards may land out of file order', String(DEFAULT_CONCURRENCY))
    .option('--give-up-after <duration>', 'stop when a row has met nothing but 429s for this long, e.g. 30m or 1h', DEFAULT_GIVE_UP_AFTER)
    .option('--journal <file>', 'where to keep the resume journal')
    .option('--again', 'send rows an earlier run imported again, as new cards')
    .option('--restart', 'forget the whole journal (rows that may be on the board too): send every row again')
    .option('--results <file>', 'write line,state,_id,message for every row (CSV)')
    .option('--rejects <file>', 'write rejected and uncertain rows in the input columns, plus a reason (CSV; NDJSON for JSON input)')
    .option('--delimiter <char>', 'field delimiter (default: detected among , ; and tab)')
    .option('--encoding <name>', 'file encoding, e.g. latin1, utf-16le (default utf-8)')
    .addOption(new Option('--empty <omit|send>', 'empty cells: omit them, or send them as ""').choices(['omit', 'send']).default('omit'))
    .option('--allow-unknown', 'send columns or keys that match no field under their own name (Create Fields on)')
    // The choices are for help and completion; planFromFlags checks the value (it also takes jsonl, any case).
    .addOption(
      new Option('--input-format <format>', 'input format (default: from the extension; stdin: csv)')
        .choices(['csv', 'tsv', 'ndjson', 'json'])
        .argParser((v: string) => v),
    )
    .option('--type <field=type>', 'send a CSV or TSV column typed: number, boolean, json or string (repeatable)', collect, [])
    .option('--force', 'with --match-on, send rows whose values already equal the card\'s')
    .option('--json', 'print the summary as JSON on stdout')
    .addHelpText('after', HELP)
    .action(async (file: string, flags: Record<string, unknown>) => {
      await run(ctx(), planFromFlags(file, flags));
    });
}
