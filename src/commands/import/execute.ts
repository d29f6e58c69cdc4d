import { createReadStream, existsSync, statSync } from 'node:fs';
import { type Context, isInteractive } from '../../context.js';
import { CancelledError, PartialError, UsageError } from '../../errors.js';
import { parseRate } from '../../http/options.js';
import { readTextFile } from '../../io/input.js';
import { createStatus } from '../../io/status.js';
import { writeJson } from '../../io/write.js';
import { runEngine } from '../../import/engine.js';
import { defaultJournalPath, Journal } from '../../import/journal.js';
import { parseMapFile, resolveMapping, unmappedError } from '../../import/mapping.js';
import { loadKeyIndex } from '../../import/match-index.js';
import { ImportOutputs } from '../../import/outputs.js';
import { Pacer } from '../../import/pacer.js';
import { planImport } from '../../import/plan.js';
import { type FileScan, scanFile } from '../../import/scan.js';
import { makeDecoder, readCsv } from '../../import/source.js';
import type { CsvItem } from '../../import/types.js';
import { askMapping, inquirerPrompter, type Prompter, previewAndSave } from './interactive.js';
import { renderPlan, renderSummary, startProgress } from './render.js';
import type { ImportOptions } from './run.js';

/** What tests may replace: the prompter (a scripted one stands in for a terminal). */
export interface ImportDeps {
  prompter?: Prompter;
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

/** Read the header, map it (flags, file, prompts) and check every decision before anything is sent. */
export async function runImport(ctx: Context, opts: ImportOptions, deps: ImportDeps = {}): Promise<void> {
  const status = createStatus(ctx);
  const scan = await checkInput(opts);
  const mapFile = opts.mapFile ? parseMapFile(await readTextFile(opts.mapFile, '--map-file'), opts.mapFile) : undefined;
  const fixedRate = ctx.globals.rate ? parseRate(ctx.globals.rate) : undefined;
  const { openApi } = await import('../../api/index.js');
  const api = await openApi(ctx);
  const pacer = new Pacer({ fixedRate });
  try {
    // Spec 4.2: fetch the schema first to learn the exact, case-sensitive field names.
    const fieldNames = (await api.getSchema({ signal: ctx.signal })).map((f) => f.name);
    const input = opts.file === '-' ? ctx.stdin : createReadStream(opts.file, { highWaterMark: 64 * 1024 });
    const reader = readCsv(input, { delimiter: opts.delimiter, encoding: opts.encoding })[Symbol.asyncIterator]();
    const head = await reader.next();
    if (head.done || head.value.kind !== 'header') throw new UsageError(`${opts.file} is empty: no header line.`);
    const headers = head.value.headers;
    const resolved = resolveMapping(headers, fieldNames, { ...opts, mapFile });
    let columns = resolved.columns;
    const buffered: CsvItem[] = [];
    if (resolved.unmapped.length > 0) {
      // Prompts need a terminal on stdin, which stdin input (-) is not (PITFALLS: prompts hang otherwise).
      const interactive = deps.prompter !== undefined || (isInteractive(ctx) && opts.file !== '-');
      if (!interactive) throw unmappedError(resolved.unmapped, opts.file);
      const prompter = deps.prompter ?? (await inquirerPrompter(ctx));
      columns = await askMapping(prompter, columns, resolved.unmapped, fieldNames);
      for (let n = await reader.next(); !n.done; n = await reader.next()) {
        buffered.push(n.value);
        if (buffered.filter((i) => i.kind === 'row').length >= 3) break;
      }
      const sample = buffered.flatMap((i) => (i.kind === 'row' ? [i.values] : []));
      await previewAndSave(ctx, prompter, columns, sample, opts.file, opts.sendEmpty);
    }
    if (opts.matchOn !== undefined && !columns.some((c) => c.target.kind !== 'skip' && c.target.kind !== 'id' && c.target.field === opts.matchOn)) {
      throw new UsageError(`--match-on ${opts.matchOn}: no CSV column is sent as that field.`, {
        hint: `Fields sent: ${columns.flatMap((c) => (c.target.kind === 'field' || c.target.kind === 'new' ? [c.target.field] : [])).join(', ')}.`,
      });
    }
    const match = opts.matchOn ? await loadKeyIndex(api, pacer, opts.matchOn, ctx.signal) : undefined;
    // Without rows read ahead for the preview, the reader itself: one async generator less per row.
    const items = buffered.length > 0 ? chain(buffered, reader) : { [Symbol.asyncIterator]: () => reader };

    if (opts.dryRun) {
      const plan = await planImport(items, { columns, sendEmpty: opts.sendEmpty, match });
      await renderPlan(ctx, opts, { columns, plan, match, boardId: api.board.id });
      return;
    }

    let journal: Journal | undefined;
    if (opts.journal !== undefined || scan !== undefined) {
      const key = { sha256: scan?.sha256, board: api.board.id };
      journal = await Journal.open(opts.journal ?? defaultJournalPath(opts.file, key), key, opts.restart);
      if (journal.previous.size > 0) status.info(`Resuming: ${journal.previous.size} rows already finished (journal ${journal.path}).`);
    } else {
      status.info('Reading stdin: no journal is kept (pass --journal F to make this import resumable).');
    }
    const outputs = new ImportOutputs({ results: opts.results, rejects: opts.rejects }, headers);
    const flushTimer = setInterval(() => outputs.flush(), 1000);
    const interrupt = new AbortController();
    const onSigint = () => {
      status.warn('Interrupted: finishing the requests in flight (Ctrl-C again to quit at once)...');
      interrupt.abort();
    };
    const onAbort = () => interrupt.abort();
    process.once('SIGINT', onSigint);
    ctx.signal.addEventListener('abort', onAbort);
    const progress = await startProgress(ctx, opts, scan?.records);
    let engine: Awaited<ReturnType<typeof runEngine>>;
    try {
      engine = await runEngine(items, {
        api,
        pacer,
        columns,
        sendEmpty: opts.sendEmpty,
        concurrency: opts.concurrency,
        giveUpAfterMs: opts.giveUpAfterMs,
        journal,
        match,
        signal: interrupt.signal,
        onEvent: (e) => {
          if (e.type === 'row') outputs.add(e.outcome);
          progress.event(e);
        },
      });
    } finally {
      process.off('SIGINT', onSigint);
      ctx.signal.removeEventListener('abort', onAbort);
      clearInterval(flushTimer);
      journal?.close();
      outputs.close();
    }
    const { summary, fatal } = engine;
    progress.done(summary);
    if (opts.json) {
      const { rows, created, updated, skipped, rejected, uncertain, durationMs } = summary;
      await writeJson(ctx.stdout, { rows, created, updated, skipped, rejected, uncertain, durationMs, results: opts.results ?? null, rejects: opts.rejects ?? null });
    } else {
      await renderSummary(ctx, summary, progress.problems, opts);
    }
    if (fatal) throw fatal;
    if (summary.stopped === 'interrupted') {
      throw new CancelledError(`Interrupted after ${summary.rows} rows.`, {
        hint: journal ? 'Run the same command again to resume: finished rows are skipped.' : 'This run kept no journal (stdin without --journal).',
      });
    }
    if (summary.rejected + summary.uncertain > 0) {
      throw new PartialError(`${summary.rejected} rows rejected, ${summary.uncertain} uncertain (the card may exist).`, {
        hint: opts.rejects ? `Fix the rows in ${opts.rejects} and import that file.` : 'Pass --rejects F to get those rows as a CSV to fix and import again.',
      });
    }
  } finally {
    await api.close();
  }
}
