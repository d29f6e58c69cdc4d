// The plan resolved against the input and the board: everything decided before the first POST (the file,
// the schema, the mapping, the --match-on index). Any problem found here stops the run with nothing sent.
import { createReadStream, existsSync, statSync } from 'node:fs';
import { type Context, isInteractive } from '../../context.js';
import { UsageError } from '../../errors.js';
import { announceStdin, readTextFile } from '../../io/input.js';
import { parseMapFile, resolveMapping, unmappedError } from '../../import/mapping.js';
import { type FileScan, scanFile } from '../../import/scan.js';
import { makeDecoder, readCsv } from '../../import/source.js';
import { ndjsonKeys, readJsonArray, readNdjson } from '../../import/json-source.js';
import { type ImportPlan, isJsonInput, type PlanSource, sendsEmpty } from '../../import/plan.js';
import type { ResolvedImport } from '../../import/run.js';
import { type ColumnMapping, type CsvItem, columnWords, type FieldType } from '../../import/types.js';
import { importCommandLine } from './command-line.js';
import { readKeyIndex } from './key-index.js';
import { askMapping, inquirerPrompter, type Prompter, previewAndSave, terminalSafePrompter } from './interactive.js';

/** What tests may replace: the prompter (a scripted one stands in for a terminal). */
export interface ImportDeps {
  prompter?: Prompter;
}

/** --type names fields: each must be sent by a column, and the column converts its cells. */
function applyTypes(columns: ColumnMapping[], types: ReadonlyMap<string, FieldType>): void {
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
async function checkInput({ file, encoding }: PlanSource): Promise<FileScan | undefined> {
  makeDecoder(encoding);
  if (file === '-') return undefined;
  if (!existsSync(file) || !statSync(file).isFile()) {
    throw new UsageError(`No such file: ${file}`, { hint: 'Pass an input file (CSV, TSV, NDJSON or JSON), or - to read stdin.' });
  }
  return scanFile(file, encoding);
}

/** Every field sent: the --match-on field must be one of them. */
function sentFields(columns: ColumnMapping[]): string[] {
  return columns.flatMap((c) => (c.target.kind === 'field' || c.target.kind === 'new' ? [c.target.field] : []));
}

/** The rows of the input, header first, in its format. */
async function readSource(ctx: Context, { file, format, delimiter, encoding }: PlanSource): Promise<AsyncIterable<CsvItem>> {
  const input = file === '-' ? ctx.stdin : createReadStream(file, { highWaterMark: 64 * 1024 });
  if (format === 'ndjson') return readNdjson(input, file === '-' ? undefined : await ndjsonKeys(file));
  if (format === 'json') return readJsonArray(file);
  return readCsv(input, { delimiter: delimiter ?? (format === 'tsv' ? '\t' : undefined), encoding });
}

/** Read the header, map it (flags, file, prompts), load the --match-on index: every decision before anything is sent. */
export async function resolveImport(ctx: Context, plan: ImportPlan, deps: ImportDeps = {}): Promise<ResolvedImport> {
  const { source, key } = plan;
  const json = isJsonInput(source);
  const sendEmpty = sendsEmpty(plan);
  const checked = await checkInput(source);
  // Progress totals: an NDJSON file has no header line; a JSON array's records are not lines.
  const scan = checked && json ? { ...checked, records: source.format === 'ndjson' ? checked.records + 1 : 0 } : checked;
  const mapFilePath = plan.mapping.mapFile;
  const mapFile = mapFilePath ? parseMapFile(await readTextFile(mapFilePath, '--map-file'), mapFilePath) : undefined;
  const api = await ctx.api();
  // Spec 4.2: fetch the schema first to learn the exact, case-sensitive field names.
  const fieldNames = (await api.getSchema({ signal: ctx.signal })).map((f) => f.name);
  if (source.file === '-') announceStdin(ctx);
  const reader = (await readSource(ctx, source))[Symbol.asyncIterator]();
  const head = await reader.next();
  if (head.done || head.value.kind !== 'header' || head.value.headers.length === 0) {
    throw new UsageError(json ? `${source.file} holds no JSON object with a key; nothing was sent.` : `${source.file} is empty: no header line.`);
  }
  const headers = head.value.headers;
  const words = columnWords(source.format);
  const resolved = resolveMapping(headers, fieldNames, { ...plan.mapping, mapFile, idColumn: key.idColumn }, words);
  let columns = resolved.columns;
  const buffered: CsvItem[] = [];
  if (resolved.unmapped.length > 0) {
    // Prompts need a terminal on stdin, which stdin input (-) is not: a prompt on a silent open stdin waits for ever.
    const interactive = deps.prompter !== undefined || (isInteractive(ctx) && source.file !== '-');
    if (!interactive) throw unmappedError(resolved.unmapped, (extra) => importCommandLine(plan, ctx.globals, { extra }), ctx.globals.verbose === true, words);
    const prompter = terminalSafePrompter(deps.prompter ?? (await inquirerPrompter(ctx)));
    // The first rows are read before the questions: each shows sample values of its column.
    for (let n = await reader.next(); !n.done; n = await reader.next()) {
      buffered.push(n.value);
      if (buffered.filter((i) => i.kind === 'row').length >= 3) break;
    }
    const sample = buffered.flatMap((i) => (i.kind === 'row' ? [i.values] : []));
    columns = await askMapping(prompter, columns, resolved.unmapped, fieldNames, sample, words);
    applyTypes(columns, plan.types);
    await previewAndSave(ctx, prompter, columns, sample, source.file, sendEmpty, plan.policy.dryRun);
  } else applyTypes(columns, plan.types);
  if (key.matchOn !== undefined && !sentFields(columns).includes(key.matchOn)) {
    throw new UsageError(`--match-on ${key.matchOn}: no column is sent as that field.`, { hint: `Fields sent: ${sentFields(columns).join(', ')}.` });
  }
  const found = key.matchOn ? await readKeyIndex(ctx, api, plan, key.matchOn, sentFields(columns)) : undefined;
  // Without rows read ahead for the preview, the reader itself: one async generator less per row.
  const items = buffered.length > 0 ? chain(buffered, reader) : { [Symbol.asyncIterator]: () => reader };
  return { api, scan, headers, columns, match: found?.index, mirror: found?.mirror, items, sendEmpty };
}
