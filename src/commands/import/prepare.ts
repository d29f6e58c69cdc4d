// Preparing an import: everything decided before the first POST (the file, the schema, the mapping, the
// --match-on index). Any problem found here stops the run with nothing sent.
import { announceStdin } from '../../io/input.js';
import { createReadStream, existsSync, statSync } from 'node:fs';
import type { ApiClient } from '../../api/types.js';
import { type Context, isInteractive } from '../../context.js';
import { UsageError } from '../../errors.js';
import { readTextFile } from '../../io/input.js';
import { importCommandLine } from '../../import/command-line.js';
import { parseMapFile, resolveMapping, unmappedError } from '../../import/mapping.js';
import { type KeyIndex, loadKeyIndex } from '../../import/match-index.js';
import { createProgress, pagesText } from '../../io/progress.js';
import { type FileScan, scanFile } from '../../import/scan.js';
import { makeDecoder, readCsv } from '../../import/source.js';
import { ndjsonKeys, readJsonArray, readNdjson } from '../../import/json-source.js';
import type { ColumnMapping, CsvItem, FieldType, InputFormat } from '../../import/types.js';
import { askMapping, inquirerPrompter, type Prompter, previewAndSave, terminalSafePrompter } from './interactive.js';
import type { ImportOptions } from './options.js';

/** What tests may replace: the prompter (a scripted one stands in for a terminal). */
export interface ImportDeps {
  prompter?: Prompter;
}

/** A run ready to send: the client, the file's hash and count, the header, the mapping, the rows to come. */
export interface PreparedImport {
  api: ApiClient;
  scan?: FileScan;
  headers: string[];
  columns: ColumnMapping[];
  match?: KeyIndex;
  items: AsyncIterable<CsvItem>;
  /** The input format read (by --input-format, else the extension). */
  format: InputFormat;
  /** Send empty values: --empty send, or JSON input (where "" is a value, and an absent key is nothing). */
  sendEmpty: boolean;
}

/** The input's format: --input-format, else the extension (.ndjson/.jsonl, .json, .tsv; anything else is CSV). */
export function inputFormatOf(opts: Pick<ImportOptions, 'file' | 'inputFormat'>): InputFormat {
  if (opts.inputFormat) return opts.inputFormat;
  const ext = /\.([^./\\]+)$/.exec(opts.file)?.[1]?.toLowerCase();
  if (ext === 'ndjson' || ext === 'jsonl') return 'ndjson';
  if (ext === 'json') return 'json';
  return ext === 'tsv' ? 'tsv' : 'csv';
}

/** Flags that mean nothing for JSON input are refused rather than ignored. */
function checkFormatFlags(opts: ImportOptions, format: InputFormat): void {
  if (format !== 'ndjson' && format !== 'json') return;
  const flag = opts.types.size > 0 ? '--type' : opts.delimiter !== undefined ? '--delimiter' : opts.encoding !== undefined && !/^utf-?8$/i.test(opts.encoding) ? '--encoding' : undefined;
  if (flag) throw new UsageError(`${flag} applies to CSV input; ${opts.file} is read as ${format}.`, { hint: flag === '--type' ? 'JSON values keep their own types.' : 'JSON input is UTF-8.' });
  if (format === 'json' && opts.file === '-') throw new UsageError('A JSON array is read from a file, not stdin.', { hint: 'Pipe one object per line with --input-format ndjson.' });
}

/** --type names fields: each must be sent by a column, and the column converts its cells. */
function applyTypes(columns: ColumnMapping[], types: Map<string, FieldType>): void {
  for (const [field, type] of types) {
    const column = columns.find((c) => (c.target.kind === 'field' || c.target.kind === 'new') && c.target.field === field);
    if (!column) throw new UsageError(`--type ${field}=${type}: no column is sent as the field '${field}'.`, { hint: `Fields sent: ${sentFields(columns).join(', ')}.` });
    column.type = type;
  }
}

async function* chain(first: CsvItem[], rest: AsyncIterator<CsvItem>): AsyncGenerator<CsvItem> {
  yield* first;
  for (let n = await rest.next(); !n.done; n = await rest.next()) yield n.value;
}

/** Check the file before the network: it exists, its encoding is known, it decodes; hash and count it. */
async function checkInput(opts: ImportOptions): Promise<FileScan | undefined> {
  makeDecoder(opts.encoding);
  if (opts.file === '-') return undefined;
  if (!existsSync(opts.file) || !statSync(opts.file).isFile()) {
    throw new UsageError(`No such file: ${opts.file}`, { hint: 'Pass a CSV file, or - to read stdin.' });
  }
  return scanFile(opts.file, opts.encoding);
}

/** Every field sent: the --match-on field must be one of them. */
function sentFields(columns: ColumnMapping[]): string[] {
  return columns.flatMap((c) => (c.target.kind === 'field' || c.target.kind === 'new' ? [c.target.field] : []));
}

/** Read the header, map it (flags, file, prompts), load the --match-on index: every decision before anything is sent. */
export async function prepareImport(ctx: Context, opts: ImportOptions, deps: ImportDeps = {}): Promise<PreparedImport> {
  const format = inputFormatOf(opts);
  checkFormatFlags(opts, format);
  const json = format === 'ndjson' || format === 'json';
  const sendEmpty = opts.sendEmpty || json;
  const checked = await checkInput(opts);
  // Progress totals: an NDJSON file has no header line; a JSON array's records are not lines.
  const scan = checked && json ? { ...checked, records: format === 'ndjson' ? checked.records + 1 : 0 } : checked;
  const mapFile = opts.mapFile ? parseMapFile(await readTextFile(opts.mapFile, '--map-file'), opts.mapFile) : undefined;
  const api = await ctx.api();
  // Spec 4.2: fetch the schema first to learn the exact, case-sensitive field names.
  const fieldNames = (await api.getSchema({ signal: ctx.signal })).map((f) => f.name);
  if (opts.file === '-') announceStdin(ctx);
  const input = opts.file === '-' ? ctx.stdin : createReadStream(opts.file, { highWaterMark: 64 * 1024 });
  const source =
    format === 'ndjson'
      ? readNdjson(input, opts.file === '-' ? undefined : await ndjsonKeys(opts.file))
      : format === 'json'
        ? readJsonArray(opts.file)
        : readCsv(input, { delimiter: opts.delimiter ?? (format === 'tsv' ? '\t' : undefined), encoding: opts.encoding });
  const reader = source[Symbol.asyncIterator]();
  const head = await reader.next();
  if (head.done || head.value.kind !== 'header' || head.value.headers.length === 0) {
    throw new UsageError(json ? `${opts.file} holds no JSON object with a key; nothing was sent.` : `${opts.file} is empty: no header line.`);
  }
  const headers = head.value.headers;
  const resolved = resolveMapping(headers, fieldNames, { ...opts, mapFile });
  let columns = resolved.columns;
  const buffered: CsvItem[] = [];
  if (resolved.unmapped.length > 0) {
    // Prompts need a terminal on stdin, which stdin input (-) is not (PITFALLS: prompts hang otherwise).
    const interactive = deps.prompter !== undefined || (isInteractive(ctx) && opts.file !== '-');
    if (!interactive) throw unmappedError(resolved.unmapped, (extra) => importCommandLine(opts, ctx.globals, { extra }), ctx.globals.verbose === true);
    const prompter = terminalSafePrompter(deps.prompter ?? (await inquirerPrompter(ctx)));
    // The first rows are read before the questions: each shows sample values of its column.
    for (let n = await reader.next(); !n.done; n = await reader.next()) {
      buffered.push(n.value);
      if (buffered.filter((i) => i.kind === 'row').length >= 3) break;
    }
    const sample = buffered.flatMap((i) => (i.kind === 'row' ? [i.values] : []));
    columns = await askMapping(prompter, columns, resolved.unmapped, fieldNames, sample);
    applyTypes(columns, opts.types);
    await previewAndSave(ctx, prompter, columns, sample, opts.file, sendEmpty, opts.dryRun);
  } else applyTypes(columns, opts.types);
  if (opts.matchOn !== undefined && !sentFields(columns).includes(opts.matchOn)) {
    throw new UsageError(`--match-on ${opts.matchOn}: no column is sent as that field.`, { hint: `Fields sent: ${sentFields(columns).join(', ')}.` });
  }
  const match = opts.matchOn ? await readKeyIndex(ctx, api, opts, opts.matchOn, sentFields(columns)) : undefined;
  // Without rows read ahead for the preview, the reader itself: one async generator less per row.
  const items = buffered.length > 0 ? chain(buffered, reader) : { [Symbol.asyncIterator]: () => reader };
  return { api, scan, headers, columns, match, items, format, sendEmpty };
}

/** Read the board for --match-on with progress on stderr (pages, cards): a large board takes a while. */
async function readKeyIndex(ctx: Context, api: ApiClient, opts: ImportOptions, field: string, fields: string[]): Promise<KeyIndex> {
  const progress = await createProgress(ctx, { silent: opts.json });
  progress.start(`Reading the board for --match-on ${field}…`);
  let read = { pages: 0, cards: 0 };
  try {
    const index = await loadKeyIndex(api, field, fields, ctx.signal, (r) => {
      read = r;
      if (!opts.json && !ctx.globals.quiet) progress.update(pagesText(r));
    });
    progress.succeed(pagesText(read).replace(/^Reading/, 'Read'));
    return index;
  } catch (err) {
    progress.stop();
    throw err;
  }
}
