// Executing an import: the journal, the report files, Ctrl-C, progress, the engine, and the summary.
import type { Context } from '../../context.js';
import { CancelledError, PartialError } from '../../errors.js';
import { runEngine } from '../../import/engine.js';
import { defaultJournalPath, Journal } from '../../import/journal.js';
import { ImportOutputs } from '../../import/outputs.js';
import { describeChanges, planImport } from '../../import/plan.js';
import { interruptible } from '../../interrupt.js';
import { createStatus } from '../../io/status.js';
import { writeJson } from '../../io/write.js';
import type { ImportOptions } from './options.js';
import { type ImportDeps, type PreparedImport, prepareImport } from './prepare.js';
import { renderPlan, renderSummary, startProgress } from './render.js';

export type { ImportDeps } from './prepare.js';

/** `cardboard import`: prepare (nothing sent on any problem), then show the plan (--dry-run) or execute. */
export async function runImport(ctx: Context, opts: ImportOptions, deps: ImportDeps = {}): Promise<void> {
  const prepared = await prepareImport(ctx, opts, deps);
  if (!opts.dryRun) return executeImport(ctx, opts, prepared);
  const { columns, match, items, api } = prepared;
  const plan = await planImport(items, { columns, sendEmpty: opts.sendEmpty, match, force: opts.force });
  const changes = await describeChanges(api, plan.updateSample);
  await renderPlan(ctx, opts, { columns, plan, match, boardId: api.board.id, changes });
}

/** Open the journal: next to the file (keyed by its hash and the board), or --journal; none for stdin without it. */
async function openJournal(ctx: Context, opts: ImportOptions, p: PreparedImport): Promise<Journal | undefined> {
  const status = createStatus(ctx);
  if (opts.journal === undefined && p.scan === undefined) {
    status.info('Reading stdin: no journal is kept (pass --journal F to make this import resumable).');
    return undefined;
  }
  const key = { sha256: p.scan?.sha256, board: p.api.board.id };
  const journal = await Journal.open(opts.journal ?? defaultJournalPath(opts.file, key), key, opts.restart);
  if (journal.previous.size > 0) status.info(`Resuming: ${journal.previous.size} rows already finished (journal ${journal.path}).`);
  return journal;
}

/** Send every row through the engine, write the reports, and end with the exit the summary calls for. */
export async function executeImport(ctx: Context, opts: ImportOptions, p: PreparedImport): Promise<void> {
  const status = createStatus(ctx);
  const journal = await openJournal(ctx, opts, p);
  const outputs = new ImportOutputs({ results: opts.results, rejects: opts.rejects }, p.headers);
  const flushTimer = setInterval(() => outputs.flush(), 1000);
  const stop = interruptible(ctx.signals, () => status.warn('Interrupted: finishing the requests in flight (Ctrl-C again to quit at once)...'));
  const progress = await startProgress(ctx, opts, p.scan?.records);
  let engine: Awaited<ReturnType<typeof runEngine>>;
  try {
    engine = await runEngine(p.items, {
      api: p.api,
      clock: ctx.clock,
      columns: p.columns,
      sendEmpty: opts.sendEmpty,
      concurrency: opts.concurrency,
      giveUpAfterMs: opts.giveUpAfterMs,
      journal,
      match: p.match,
      force: opts.force,
      signal: stop.signal,
      onEvent: (e) => {
        if (e.type === 'row') outputs.add(e.outcome);
        progress.event(e);
      },
    });
  } finally {
    stop.dispose();
    clearInterval(flushTimer);
    journal?.close();
    outputs.close();
  }
  const { summary, fatal } = engine;
  progress.done(summary);
  if (opts.json) {
    const { rows, created, updated, unchanged, skipped, rejected, uncertain, durationMs } = summary;
    await writeJson(ctx.stdout, { rows, created, updated, unchanged, skipped, rejected, uncertain, durationMs, results: opts.results ?? null, rejects: opts.rejects ?? null });
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
}
