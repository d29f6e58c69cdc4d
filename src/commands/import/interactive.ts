// The interactive mapping: one question per unmapped header, a preview of the first
// rows as they will be sent, and an offer to save the mapping for `--map-file` next time.
import type { Context } from '../../context.js';
import { CancelledError } from '../../errors.js';
import { fileError } from '../../fs-errors.js';
import { checkTargets, mappingToFile, rowBody, shellQuote, type Unmapped } from '../../import/mapping.js';
import { type ColumnMapping, type ColumnTarget, type ColumnWords, columnWords } from '../../import/types.js';
import { answer } from '../../io/prompt.js';
import { plural, quoted, terminalText } from '../../io/text.js';
import { editDistance } from '../../did-you-mean.js';
import { writePrivateFile } from '../../private-file.js';

/** One option of a select prompt. */
export interface Choice<T> {
  name: string;
  value: T;
  description?: string;
}

/** The questions the import may ask; tests pass a scripted one, the CLI wraps @inquirer/prompts. */
export interface Prompter {
  /** `defaultValue`: the choice Enter takes (by value identity), else the first. */
  select<T>(message: string, choices: Choice<T>[], defaultValue?: T): Promise<T>;
  confirm(message: string, defaultValue: boolean): Promise<boolean>;
  input(message: string, defaultValue: string): Promise<string>;
}

/** @inquirer/prompts on the context's streams (prompts go to stderr: stdout is for data). */
export async function inquirerPrompter(ctx: Context): Promise<Prompter> {
  const prompts = await import('@inquirer/prompts');
  const streams = { input: ctx.stdin, output: ctx.stderr, signal: ctx.signal };
  return {
    select: (message, choices, defaultValue) => answer(prompts.select({ message, choices, pageSize: 12, default: defaultValue }, streams)),
    confirm: (message, defaultValue) => answer(prompts.confirm({ message, default: defaultValue }, streams)),
    input: (message, defaultValue) => answer(prompts.input({ message, default: defaultValue }, streams)),
  };
}

/**
 * The same questions with what they show escaped (terminalText): they name the input's columns and board fields.
 * Only the text shown changes; a choice's value stays exact. The import wraps whichever prompter it uses.
 */
export function terminalSafePrompter(prompter: Prompter): Prompter {
  const safe = (text: string) => terminalText(text);
  const safeChoice = <T>(c: Choice<T>): Choice<T> =>
    c.description === undefined ? { ...c, name: safe(c.name) } : { ...c, name: safe(c.name), description: safe(c.description) };
  return {
    select: (message, choices, defaultValue) => prompter.select(safe(message), choices.map(safeChoice), defaultValue),
    confirm: (message, defaultValue) => prompter.confirm(safe(message), defaultValue),
    input: (message, defaultValue) => prompter.input(safe(message), safe(defaultValue)),
  };
}

const norm = (s: string) => s.toLowerCase().replace(/[\s_-]+/g, '');

/** Field choices for one header, closest first; fields another column already sends are left out. */
export function fieldChoices(column: Unmapped, fieldNames: string[], taken: Set<string>, createFields: boolean, words: ColumnWords = columnWords('csv')): Choice<ColumnTarget>[] {
  const free = fieldNames.filter((f) => !taken.has(f));
  const ranked = free
    .map((field) => ({ field, distance: field === column.suggestion ? -1 : editDistance(norm(column.header), norm(field)) }))
    .sort((a, b) => a.distance - b.distance)
    .map(({ field }) => field);
  const choices: Choice<ColumnTarget>[] = ranked.map((f) => ({
    name: f === column.suggestion ? `${f}  (closest)` : f,
    value: { kind: 'field', field: f },
  }));
  choices.push({ name: `skip this ${words.short}`, value: { kind: 'skip' } });
  if (createFields) {
    choices.push({ name: `new field '${column.header}' (Create Fields is on)`, value: { kind: 'new', field: column.header }, description: 'spec 4.3 rule 2' });
  }
  return choices;
}

/** Up to two non-empty sample values of a column, strings in quotes, other values as JSON; escaped, each cut to 40 columns. */
export function sampleText(sample: readonly (readonly unknown[])[], index: number): string {
  const values = sample.map((row) => row[index]).filter((v) => v !== undefined && v !== '').slice(0, 2);
  const shown = values.map((v) => terminalText(typeof v === 'string' ? `"${v}"` : (JSON.stringify(v) ?? ''), { maxColumns: 40 }));
  return shown.length ? ` (e.g. ${shown.join(', ')})` : ' (empty in the first rows)';
}

/**
 * Ask for every unmapped header, showing two sample values of each; returns the completed column list.
 * `words` name the input's columns (`CSV column`, `NDJSON key`).
 * A column with no close field defaults to "skip": one Enter never sends data into an unrelated field.
 */
export async function askMapping(
  prompter: Prompter,
  columns: ColumnMapping[],
  unmapped: Unmapped[],
  fieldNames: string[],
  sample: readonly (readonly unknown[])[] = [],
  words: ColumnWords = columnWords('csv'),
): Promise<ColumnMapping[]> {
  const out = [...columns];
  const createFields = await prompter.confirm(
    `${plural(unmapped.length, words.short)} match${unmapped.length === 1 ? 'es' : ''} no field. Does this board have Create Fields on (so a ${words.short} may become a new field)?`,
    false,
  );
  for (const column of unmapped) {
    const taken = new Set(out.flatMap((c) => (c.target.kind === 'field' || c.target.kind === 'new' ? [c.target.field] : [])));
    const choices = fieldChoices(column, fieldNames, taken, createFields, words);
    const skip = choices.find((c) => c.value.kind === 'skip')!.value;
    const message = `${words.long} ${quoted(column.header)}${sampleText(sample, column.index)} goes to which field?`;
    // The proposal is the suggested field while it is free; taken by another column, Enter skips.
    const proposed = choices.find((c) => c.value.kind === 'field' && c.value.field === column.suggestion)?.value ?? skip;
    const target = await prompter.select(message, choices, proposed);
    out.push({ header: column.header, index: column.index, target, how: 'prompt' });
  }
  out.sort((a, b) => a.index - b.index);
  checkTargets(out);
  return out;
}

/** Show the first rows as they will be sent, confirm, and offer to save the mapping as a --map-file. */
export async function previewAndSave(
  ctx: Context,
  prompter: Prompter,
  columns: ColumnMapping[],
  sample: unknown[][],
  file: string,
  sendEmpty: boolean,
  dryRun = false,
): Promise<void> {
  const shown = (values: unknown[]) => {
    try {
      return JSON.stringify(rowBody(columns, values, sendEmpty));
    } catch (err) {
      return `(rejected: ${(err as Error).message})`;
    }
  };
  const lines = sample.map((values) => `  ${terminalText(shown(values))}`);
  ctx.stderr.write(`First rows as they will be sent:\n${lines.join('\n') || '  (no rows)'}\n`);
  // A dry run sends nothing: there is nothing to confirm.
  if (!dryRun && !(await prompter.confirm('Start the import with this mapping?', true))) {
    throw new CancelledError('Import cancelled at the preview; nothing was sent.');
  }
  if (!(await prompter.confirm('Save this mapping for the next run (--map-file)?', true))) return;
  const base = file === '-' ? 'stdin' : file.replace(/\.[^./\\]+$/, '');
  const path = await prompter.input('Save the mapping as', `${base}.map.json`);
  // Owner-only like every file cardboard creates (a file that exists keeps its mode); git keeps no mode
  // but the executable bit, so the mapping commits and shares as any other file.
  try {
    writePrivateFile(path, `${JSON.stringify(mappingToFile(columns), null, 2)}\n`, { flag: 'the mapping file' });
  } catch (err) {
    throw fileError(err, { action: 'save the mapping to', path, hint: 'Run again and give a path in a writable directory when asked where to save the mapping; nothing was sent.' });
  }
  ctx.stderr.write(`${terminalText(`Saved. Next time: cardboard import ${shellQuote(file)} --map-file ${shellQuote(path)}`)}\n`);
}
