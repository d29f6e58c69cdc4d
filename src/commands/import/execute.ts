// Executing an import: the journal, the report files, Ctrl-C, progress, the engine, and the summary.
import type { Context } from '../../context.js';
import { CancelledError, PartialError } from '../../errors.js';
import { tmpdir } from 'node:os';
import { dirname, resolve } from 'node:path';
import { runEngine } from '../../import/engine.js';
import { boardLockPath, lockBoard } from '../../import/board-lock.js';
import { defaultJournalPath, Journal, type JournalKey, planDigest } from '../../import/journal.js';
import { checkOutputPaths } from '../../import/path-guard.js';
import { type ImportPlan, isJsonInput } from '../../import/plan.js';
import type { ImportSummary } from '../../import/types.js';
import { ImportOutputs } from '../../import/outputs.js';
import { rowsPerSecond } from '../../import/rate.js';
import { describeChanges, dryRun } from '../../import/dry-run.js';
import type { FileLock } from '../../file-lock.js';
import { fileError } from '../../fs-errors.js';
import { createStatus } from '../../io/status.js';
import { writeJson } from '../../io/write.js';
import { importCommandLine, nextOutputName } from './command-line.js';
import { type ImportDeps, type ResolvedImport, resolveImport } from './resolve.js';
import { renderDryRun, renderSummary, startProgress } from './render.js';
import { groupDigits, plural } from '../../io/text.js';

export type { ImportDeps } from './resolve.js';

/** `cardboard import`: resolve the plan (nothing sent on any problem), then report it (--dry-run) or execute it. */
export async function runImport(ctx: Context, plan: ImportPlan, deps: ImportDeps = {}): Promise<void> {
  const { outputs } = plan;
  // Before the network: an output that is the input (or another output) would destroy it mid-run.
  checkOutputPaths(plan.source.file, [
    { flag: '--results', path: outputs.results },
    { flag: '--rejects', path: outputs.rejects },
    { flag: '--journal', path: outputs.journal },
  ]);
  const resolved = await resolveImport(ctx, plan, deps);
  if (!plan.policy.dryRun) return executeImport(ctx, plan, resolved);
  const { columns, match, items, api } = resolved;
  const report = await dryRun(items, { columns, sendEmpty: resolved.sendEmpty, match, force: plan.policy.force });
  const changes = await describeChanges(api, report.updateSample);
  await renderDryRun(ctx, outputs, { columns, report, match, boardId: api.board.id, changes });
}

/** The journal's key: the board (base URL and id); the input, its content and the plan are reported. */
function journalKey(plan: ImportPlan, r: ResolvedImport): JournalKey {
  const { file } = plan.source;
  const key: JournalKey = { board: r.api.board.id, baseUrl: r.api.board.baseUrl, input: file === '-' ? '-' : resolve(file), plan: planDigest(plan, r.columns) };
  if (r.scan) key.sha256 = r.scan.sha256;
  return key;
}

/**
 * Lock the board (one import into it at a time, whatever the input), then open the journal: next to the
 * file, or --journal; none for stdin without --journal. A journal left by an unfinished run is applied by
 * content (resume.ts), and the run says so first.
 */
function lockAndOpen(ctx: Context, plan: ImportPlan, p: ResolvedImport): { lock: FileLock; journal?: Promise<Journal> } {
  const status = createStatus(ctx);
  const { file } = plan.source;
  const { journal: journalFlag } = plan.outputs;
  const doing = `importing ${file === '-' ? 'stdin' : resolve(file)}`;
  let lock: FileLock;
  let lockPath: string | undefined;
  try {
    lockPath = boardLockPath(p.api.board.baseUrl, p.api.board.id);
    lock = lockBoard(lockPath, doing);
  } catch (err) {
    throw fileError(err, { action: 'create the import lock in', path: lockPath ? dirname(lockPath) : tmpdir(), hint: 'The lock is kept in the temporary directory: set TMPDIR to a writable directory of your own.' });
  }
  if (journalFlag === undefined && p.scan === undefined) {
    status.info('Reading stdin: no journal is kept (pass --journal F to make this import resumable).');
    return { lock };
  }
  const key = journalKey(plan, p);
  const path = journalFlag ?? defaultJournalPath(file, key);
  // A directory that cannot be created or written names the flag that moves it.
  const hint =
    journalFlag === undefined
      ? `The journal is kept next to the input; pass --journal <path> (a file in a writable directory) to keep it elsewhere.`
      : 'Pass --journal with a file path in a writable directory.';
  const journal = Journal.open(path, key, plan.policy.restart, ctx.secrets)
    .catch((err: unknown) => {
      throw fileError(err, { action: 'write the journal', path, hint });
    })
    .then((j) => {
      if (j.found && j.previous.length > 0) status.info(resumeText(j, key));
      return j;
    });
  return { lock, journal };
}

/**
 * How long after a killed run's last journal write its requests in flight are taken to have landed: a
 * server finishing a request it received just before the kill stores the card after our read otherwise.
 */
export const IN_FLIGHT_LANDS_MS = 5000;

/** Clock time at which rows in flight at the end of the journal's earlier run may be looked for. */
function settleAt(ctx: Context, journal: Journal | undefined): number | undefined {
  if (journal?.lastWritten === undefined || !journal.previous.some((e) => e.state === 'sending')) return undefined;
  return ctx.clock.now() + Math.max(0, journal.lastWritten + IN_FLIGHT_LANDS_MS - Date.now());
}

/** Rows an earlier run finished (created or updated): a resumed run skips them, and its progress starts there. */
function finishedBefore(j: Journal | undefined): number {
  let n = 0;
  for (const e of j?.previous ?? []) if (e.state === 'created' || e.state === 'updated') n++;
  return n;
}

/** What a resumed run says first: the journal applied, what it holds, and how rows are matched to it. */
function resumeText(j: Journal, key: JournalKey): string {
  const found = j.found!;
  const count = new Map<string, number>();
  for (const e of j.previous) count.set(e.state, (count.get(e.state) ?? 0) + 1);
  const done = finishedBefore(j);
  const maybe = (count.get('uncertain') ?? 0) + (count.get('sending') ?? 0);
  const lines = [`Resuming: ${plural(done, 'row')} already finished (journal ${j.path}, started ${found.started}).`];
  if (maybe > 0) {
    const inFlight = count.get('sending') ?? 0;
    const wait = inFlight > 0 ? ` (once ${IN_FLIGHT_LANDS_MS / 1000}s have passed since it stopped, so that requests the server was still handling have landed)` : '';
    lines.push(`${plural(maybe, 'row')} may have been applied (uncertain, or in flight when it stopped): the board is read for them before anything is sent again${wait}.`);
  }
  const other: string[] = [];
  if (found.input !== key.input) other.push(`input ${found.input}`);
  if (found.sha256 !== key.sha256 || key.sha256 === undefined) other.push(key.sha256 === undefined ? 'stdin (whose content cannot be compared as a whole)' : 'other content');
  if (found.plan !== key.plan) other.push('another mapping or options');
  if (other.length > 0) {
    lines.push(
      `It was written for ${other.join(', ')}: rows are matched to it by content, and a row changed since it was sent is sent again only by its _id or --match-on key (else rejected, naming its line).`,
    );
  }
  return lines.join('\n');
}

/**
 * After the first Ctrl-C, how long requests in flight may take to be answered; then they are cut off and
 * their rows left uncertain (the next run reads the board for them before sending anything again).
 */
export const IN_FLIGHT_GRACE_MS = 2000;

/** Send every row through the engine, write the reports, and end with the exit the summary calls for. */
export async function executeImport(ctx: Context, plan: ImportPlan, p: ResolvedImport): Promise<void> {
  const { outputs: paths, policy } = plan;
  const status = createStatus(ctx);
  const held = lockAndOpen(ctx, plan, p);
  let journal: Journal | undefined;
  try {
    journal = await held.journal;
  } catch (err) {
    held.lock.release();
    throw err;
  }
  let outputs: ImportOutputs;
  try {
    outputs = new ImportOutputs({ results: paths.results, rejects: paths.rejects }, p.headers, isJsonInput(plan.source), ctx.secrets);
  } catch (err) {
    // Nothing was sent: the journal and the lock go as if the run had not started.
    if (journal?.previous.length === 0) journal.discard();
    else journal?.close();
    held.lock.release();
    throw err;
  }
  const flushTimer = setInterval(() => outputs.flush(), 1000);
  const undrain = ctx.cancel.drainOn({
    graceMs: IN_FLIGHT_GRACE_MS,
    onFirst: () => status.warn(`Interrupted: finishing the requests in flight for up to ${IN_FLIGHT_GRACE_MS / 1000}s (Ctrl-C again to quit at once)...`),
  });
  const progress = await startProgress(ctx, paths, p.scan?.records, finishedBefore(journal));
  let engine: Awaited<ReturnType<typeof runEngine>>;
  let finished = false;
  try {
    engine = await runEngine(p.items, {
      api: p.api,
      clock: ctx.clock,
      columns: p.columns,
      sendEmpty: p.sendEmpty,
      concurrency: policy.concurrency,
      giveUpAfterMs: policy.giveUpAfterMs,
      journal,
      settleInFlightAt: settleAt(ctx, journal),
      match: p.match,
      force: policy.force,
      signal: ctx.cancel.drain,
      stopNow: ctx.signal,
      onEvent: (e) => {
        if (e.type === 'row') outputs.add(e.outcome);
        progress.event(e);
      },
    });
    // Rejected and uncertain rows keep the journal: the same command (the input fixed) skips every row
    // done, reads the board for the uncertain ones, and knows what the rejected ones had sent before.
    finished = engine.summary.stopped === undefined && engine.summary.uncertain === 0 && engine.summary.rejected === 0;
  } finally {
    undrain();
    clearInterval(flushTimer);
    outputs.close();
    // A run that reached the end of its input with every row done deletes its journal: the next run starts afresh.
    if (finished) journal?.discard();
    else journal?.close();
    held.lock.release();
  }
  const { summary, fatal } = engine;
  progress.done(summary);
  if (paths.json) {
    const { rows, created, updated, unchanged, skipped, rejected, uncertain, settled, durationMs } = summary;
    const rowsPerSec = Math.round(rowsPerSecond({ rows, skipped, elapsedMs: durationMs }) * 10) / 10;
    // The same state names as --dry-run --json (with dryRun telling them apart), results files and the journal.
    await writeJson(ctx.stdout, { dryRun: false, rows, created, updated, unchanged, skipped, rejected, uncertain, settled, durationMs, rowsPerSec, results: paths.results ?? null, rejects: paths.rejects ?? null });
  } else {
    await renderSummary(ctx, summary, progress.problems, paths);
  }
  const resume = journal ? `Run the same command again to resume: ${importCommandLine(plan, ctx.globals)}` : undefined;
  if (fatal) {
    if (resume) status.info(resume);
    throw fatal;
  }
  if (summary.stopped === 'interrupted') {
    throw new CancelledError(`Interrupted after ${plural(summary.rows, 'row')}.`, {
      hint: resume ?? 'This run kept no journal (stdin without --journal).',
    });
  }
  if (summary.rejected + summary.uncertain > 0) {
    throw new PartialError(`${plural(summary.rejected, 'row')} rejected, ${groupDigits(summary.uncertain)} uncertain (the card may exist).`, {
      hint: partialHint(ctx, plan, p, summary, journal !== undefined),
    });
  }
}

/**
 * After rejected or uncertain rows: import the rejects file with the same flags (its outputs renamed so
 * it does not overwrite itself). Uncertain rows may be on the board: without --match-on or an _id
 * column, a re-import would create them twice, so the hint asks for a key instead.
 */
function partialHint(ctx: Context, plan: ImportPlan, p: ResolvedImport, summary: ImportSummary, journalled: boolean): string {
  const { results, rejects } = plan.outputs;
  const keyed = plan.key.matchOn !== undefined || p.columns.some((c) => c.target.kind === 'id');
  const fields = p.columns.flatMap((c) => (c.target.kind === 'field' || c.target.kind === 'new' ? [c.target.field] : []));
  const lines: string[] = [];
  if (summary.uncertain > 0 && journalled) {
    lines.push(`Run the same command again to settle the ${summary.uncertain} uncertain rows: it reads the board for them and sends only those it does not find: ${importCommandLine(plan, ctx.globals)}`);
  }
  if (summary.uncertain > 0 && !keyed) {
    lines.push(
      `${summary.uncertain} uncertain rows may already be on the board: do not import them again as they are.`,
      `Re-import them with --match-on <field> (a field whose value is unique per card; fields sent: ${fields.join(', ')}) or with an _id column.`,
    );
  }
  if (!rejects) {
    lines.push('Pass --rejects F to get those rows as a file to fix and import again with the same flags.');
    return lines.join('\n');
  }
  const cmd = importCommandLine(plan, ctx.globals, {
    file: rejects,
    rejects: nextOutputName(rejects),
    results: results === undefined ? undefined : nextOutputName(results),
    matchOn: keyed || summary.uncertain === 0 ? undefined : '<Field>',
  });
  lines.push(`Fix the rows in ${rejects}, then import it with the same flags: ${cmd}`);
  return lines.join('\n');
}
