// Executing an import: the journal, the report files, Ctrl-C, progress, the engine, and the summary.
import type { Context } from '../../context.js';
import { CancelledError, PartialError } from '../../errors.js';
import { dirname, join } from 'node:path';
import { runEngine } from '../../import/engine.js';
import { importCommandLine, nextOutputName } from '../../import/command-line.js';
import { defaultJournalPath, Journal, type JournalKey, journalDir, journalStem, otherPlanJournals, planDigest } from '../../import/journal.js';
import { ImportLock } from '../../import/lock.js';
import { checkOutputPaths } from '../../import/path-guard.js';
import type { ImportSummary } from '../../import/types.js';
import { ImportOutputs } from '../../import/outputs.js';
import { rowsPerSecond } from '../../import/rate.js';
import { describeChanges, planImport } from '../../import/plan.js';
import { interruptible } from '../../interrupt.js';
import { fileError } from '../../fs-errors.js';
import { createStatus } from '../../io/status.js';
import { writeJson } from '../../io/write.js';
import type { ImportOptions } from './options.js';
import { type ImportDeps, type PreparedImport, prepareImport } from './prepare.js';
import { renderPlan, renderSummary, startProgress } from './render.js';

export type { ImportDeps } from './prepare.js';

/** `cardboard import`: prepare (nothing sent on any problem), then show the plan (--dry-run) or execute. */
export async function runImport(ctx: Context, opts: ImportOptions, deps: ImportDeps = {}): Promise<void> {
  // Before the network: an output that is the input (or another output) would destroy it mid-run.
  checkOutputPaths(opts.file, [
    { flag: '--results', path: opts.results },
    { flag: '--rejects', path: opts.rejects },
    { flag: '--journal', path: opts.journal },
  ]);
  const prepared = await prepareImport(ctx, opts, deps);
  if (!opts.dryRun) return executeImport(ctx, opts, prepared);
  const { columns, match, items, api } = prepared;
  const plan = await planImport(items, { columns, sendEmpty: prepared.sendEmpty, match, force: opts.force });
  const changes = await describeChanges(api, plan.updateSample);
  await renderPlan(ctx, opts, { columns, plan, match, boardId: api.board.id, changes });
}

/** The journal's key: the input's content, the board (base URL and id) and the plan. */
function journalKey(opts: ImportOptions, p: PreparedImport): JournalKey {
  const plan = planDigest({ ...opts, columns: p.columns });
  return { sha256: p.scan?.sha256, board: p.api.board.id, baseUrl: p.api.board.baseUrl, plan };
}

/**
 * Lock the input and board (whatever the plan), then open the journal: next to the file, or --journal;
 * none for stdin without --journal. Unfinished journals of another plan are named, never applied.
 */
function lockAndOpen(ctx: Context, opts: ImportOptions, p: PreparedImport): { lock?: ImportLock; journal?: Promise<Journal> } {
  const status = createStatus(ctx);
  if (opts.journal === undefined && p.scan === undefined) {
    status.info('Reading stdin: no journal is kept (pass --journal F to make this import resumable).');
    return {};
  }
  const key = journalKey(opts, p);
  // The lock sits beside the journal: the same command (a CI retry) always meets the same lock.
  const dir = opts.journal !== undefined ? dirname(opts.journal) : journalDir(opts.file);
  const stem = journalStem(opts.file, key);
  const path = opts.journal ?? defaultJournalPath(opts.file, key);
  // A directory that cannot be created or written names the flag that moves it (issue 11, finding 5).
  const hint =
    opts.journal === undefined
      ? `The journal and its lock are kept next to the input; pass --journal <path> (a file in a writable directory) to keep them elsewhere.`
      : 'Pass --journal with a file path in a writable directory.';
  const fail = (action: string, at: string) => (err: unknown): never => {
    throw fileError(err, { action, path: at, hint });
  };
  let lock: ImportLock;
  try {
    lock = ImportLock.acquire(join(dir, `${stem}.lock`));
  } catch (err) {
    return fail('create the import lock in', dir)(err);
  }
  if (opts.journal === undefined && !opts.restart) {
    for (const other of otherPlanJournals(dir, stem, path)) {
      status.warn(`An unfinished journal of this file and board under another mapping or options is not applied: ${other}`);
    }
  }
  const journal = Journal.open(path, key, opts.restart, ctx.secrets).catch(fail('write the journal', path)).then((j) => {
    if (j.previous.size > 0) status.info(`Resuming: ${j.previous.size} rows already finished (journal ${j.path}).`);
    return j;
  });
  return { lock, journal };
}

/** Send every row through the engine, write the reports, and end with the exit the summary calls for. */
export async function executeImport(ctx: Context, opts: ImportOptions, p: PreparedImport): Promise<void> {
  const status = createStatus(ctx);
  const held = lockAndOpen(ctx, opts, p);
  let journal: Journal | undefined;
  try {
    journal = await held.journal;
  } catch (err) {
    held.lock?.release();
    throw err;
  }
  let outputs: ImportOutputs;
  try {
    outputs = new ImportOutputs({ results: opts.results, rejects: opts.rejects }, p.headers, p.format === 'ndjson' || p.format === 'json', ctx.secrets);
  } catch (err) {
    // Nothing was sent: the journal and the lock go as if the run had not started.
    if (journal?.previous.size === 0) journal.discard();
    else journal?.close();
    held.lock?.release();
    throw err;
  }
  const flushTimer = setInterval(() => outputs.flush(), 1000);
  const stop = interruptible(ctx.signals, () => status.warn('Interrupted: finishing the requests in flight (Ctrl-C again to quit at once)...'));
  const progress = await startProgress(ctx, opts, p.scan?.records);
  let engine: Awaited<ReturnType<typeof runEngine>>;
  let finished = false;
  try {
    engine = await runEngine(p.items, {
      api: p.api,
      clock: ctx.clock,
      columns: p.columns,
      sendEmpty: p.sendEmpty,
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
    finished = engine.summary.stopped === undefined;
  } finally {
    stop.dispose();
    clearInterval(flushTimer);
    outputs.close();
    // A run that reached the end of its input closes its journal: the next run starts afresh.
    if (finished) journal?.discard();
    else journal?.close();
    held.lock?.release();
  }
  const { summary, fatal } = engine;
  progress.done(summary);
  if (opts.json) {
    const { rows, created, updated, unchanged, skipped, rejected, uncertain, durationMs } = summary;
    const rowsPerSec = Math.round(rowsPerSecond({ rows, skipped, elapsedMs: durationMs }) * 10) / 10;
    // The same state names as --dry-run --json (with dryRun telling them apart), results files and the journal.
    await writeJson(ctx.stdout, { dryRun: false, rows, created, updated, unchanged, skipped, rejected, uncertain, durationMs, rowsPerSec, results: opts.results ?? null, rejects: opts.rejects ?? null });
  } else {
    await renderSummary(ctx, summary, progress.problems, opts);
  }
  const resume = journal ? `Run the same command again to resume: ${importCommandLine(opts, ctx.globals)}` : undefined;
  if (fatal) {
    if (resume) status.info(resume);
    throw fatal;
  }
  if (summary.stopped === 'interrupted') {
    throw new CancelledError(`Interrupted after ${summary.rows} rows.`, {
      hint: resume ?? 'This run kept no journal (stdin without --journal).',
    });
  }
  if (summary.rejected + summary.uncertain > 0) {
    throw new PartialError(`${summary.rejected} rows rejected, ${summary.uncertain} uncertain (the card may exist).`, {
      hint: partialHint(ctx, opts, p, summary),
    });
  }
}

/**
 * After rejected or uncertain rows: import the rejects file with the same flags (its outputs renamed so
 * it does not overwrite itself). Uncertain rows may be on the board: without --match-on or an _id
 * column, a re-import would create them twice, so the hint asks for a key instead.
 */
function partialHint(ctx: Context, opts: ImportOptions, p: PreparedImport, summary: ImportSummary): string {
  const keyed = opts.matchOn !== undefined || p.columns.some((c) => c.target.kind === 'id');
  const fields = p.columns.flatMap((c) => (c.target.kind === 'field' || c.target.kind === 'new' ? [c.target.field] : []));
  const lines: string[] = [];
  if (summary.uncertain > 0 && !keyed) {
    lines.push(
      `${summary.uncertain} uncertain rows may already be on the board: do not import them again as they are.`,
      `Re-import them with --match-on <field> (a field whose value is unique per card; fields sent: ${fields.join(', ')}) or with an _id column.`,
    );
  }
  if (!opts.rejects) {
    lines.push('Pass --rejects F to get those rows as a file to fix and import again with the same flags.');
    return lines.join('\n');
  }
  const cmd = importCommandLine(opts, ctx.globals, {
    file: opts.rejects,
    rejects: nextOutputName(opts.rejects),
    results: opts.results === undefined ? undefined : nextOutputName(opts.results),
    matchOn: keyed || summary.uncertain === 0 ? undefined : '<Field>',
  });
  lines.push(`Fix the rows in ${opts.rejects}, then import it with the same flags: ${cmd}`);
  return lines.join('\n');
}
