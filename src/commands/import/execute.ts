// Executing an import: the journal, the report files, Ctrl-C, progress, the engine, and the summary.
import type { Context } from '../../context.js';
import { ApiError, CancelledError, PartialError } from '../../errors.js';
import { dirname, resolve } from 'node:path';
import { runEngine } from '../../import/engine.js';
import { boardLockPath, lockBoard, serverIdentity } from '../../import/board-lock.js';
import { defaultJournalPath, holdsCard, Journal, type JournalEntry, type JournalKey, planDigest } from '../../import/journal.js';
import type { Api } from '../../api/types.js';
import { DEFAULT_TIMEOUT_MS } from '../../http/index.js';
import { checkOutputPaths } from '../../import/path-guard.js';
import { type ImportPlan, isJsonInput } from '../../import/plan.js';
import { columnWords, type ImportSummary } from '../../import/types.js';
import { ImportOutputs } from '../../import/outputs.js';
import { rowsPerSecond } from '../../import/rate.js';
import { describeChanges, dryRun } from '../../import/dry-run.js';
import type { FileLock } from '../../file-lock.js';
import { fileError } from '../../fs-errors.js';
import { createStatus } from '../../io/status.js';
import { writeJson } from '../../io/write.js';
import { importCommandLine, nextOutputName } from './command-line.js';
import { type ImportDeps, type ResolvedImport, resolveImport } from './resolve.js';
import { rejectedText, renderDryRun, renderSummary, startProgress } from './render.js';
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
  await renderDryRun(ctx, outputs, { columns, report, match, boardId: api.board.id, changes, words: columnWords(plan.source.format) });
  // A dry run is a CI gate: rows a run would reject end it as such a run would end (exit 3).
  if (report.rejected > 0) {
    throw new PartialError(`--dry-run: ${plural(report.rejected, 'row')} of ${groupDigits(report.rows)} would be rejected; nothing was sent.`, {
      hint: `Fix the input first: a run would reject ${report.rejected === 1 ? 'that row' : 'those rows'} (exit 3). The report names each with its reason${outputs.json ? ' ("rejections", the first 20)' : ''}.`,
    });
  }
}

/** The journal's key: the board (its server's identity and id); the input, its content and the plan are reported. */
function journalKey(plan: ImportPlan, r: ResolvedImport, server: string): JournalKey {
  const { file } = plan.source;
  const key: JournalKey = { board: r.api.board.id, baseUrl: r.api.board.baseUrl, server, input: file === '-' ? '-' : resolve(file), plan: planDigest(plan, r.columns) };
  if (r.scan) key.sha256 = r.scan.sha256;
  return key;
}

/** How many remembered cards are read back before a run trusts its journal's memory of them. */
const MEMORY_CHECKS = 3;

/**
 * Whether the cards a journal remembers are gone from the board: up to MEMORY_CHECKS of them (the newest,
 * the oldest and one between) are read by id, and only when every one answers 404. A board emptied or
 * replaced under the same id (a restarted emulator) makes the memory stale; a card deleted by someone is
 * one of many, and a read that fails otherwise (the network, a 500) proves nothing either way.
 */
async function memoryIsStale(api: Api, entries: readonly JournalEntry[], signal: AbortSignal): Promise<{ checked: number } | undefined> {
  const ids = entries.filter((e) => e.id !== undefined && holdsCard(e)).map((e) => e.id!);
  if (ids.length === 0) return undefined;
  const picks = [...new Set([ids.at(-1)!, ids[0]!, ids[Math.floor(ids.length / 2)]!])].slice(0, MEMORY_CHECKS);
  for (const id of picks) {
    try {
      await api.getCard(id, { signal, maxTries: 3 });
      return undefined;
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 404) return undefined;
    }
  }
  return { checked: picks.length };
}

/** "2026-11-27 06:40 UTC" from an ISO time: the date a person reads of when rows were imported. */
function dateText(iso: string | undefined): string {
  const m = iso === undefined ? null : /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})/.exec(iso);
  return m ? `${m[1]} ${m[2]} UTC` : 'an earlier run';
}

/**
 * Lock the board (one import into it at a time, whatever the input and the environment), then open the
 * journal: next to the file, or --journal; none for stdin without --journal. A journal of earlier runs is
 * applied by content (resume.ts), and the run says so first; rows it remembers as imported are skipped,
 * once a few of their cards are read back (memoryIsStale).
 */
async function lockAndOpen(ctx: Context, plan: ImportPlan, p: ResolvedImport): Promise<{ lock: FileLock; journal?: Journal }> {
  const status = createStatus(ctx);
  const { file } = plan.source;
  const { journal: journalFlag } = plan.outputs;
  const doing = `importing ${file === '-' ? 'stdin' : resolve(file)}`;
  const server = await serverIdentity(p.api.board.baseUrl);
  let lock: FileLock;
  let lockPath: string | undefined;
  try {
    lockPath = boardLockPath(server, p.api.board.id);
    lock = await lockBoard(lockPath, doing, ctx.clock);
  } catch (err) {
    throw fileError(err, { action: 'create the import lock in', path: lockPath ? dirname(lockPath) : '~/.cache/cardboard/locks', hint: 'The lock is kept in ~/.cache/cardboard/locks (or /tmp/cardboard-<uid>-locks): make one of them writable, then run again.' });
  }
  if (journalFlag === undefined && p.scan === undefined) {
    status.info('Reading stdin: no journal is kept (pass --journal F to make this import resumable and remembered).');
    return { lock };
  }
  const key = journalKey(plan, p, server);
  const path = journalFlag ?? defaultJournalPath(file, key);
  // A directory that cannot be created or written names the flag that moves it.
  const hint =
    journalFlag === undefined
      ? `The journal is kept next to the input; pass --journal <path> (a file in a writable directory) to keep it elsewhere.`
      : 'Pass --journal with a file path in a writable directory.';
  const { restart, again } = plan.policy;
  let stale: { checked: number; at: string | undefined; cards: number } | undefined;
  try {
    const journal = await Journal.open(path, key, {
      forget: restart ? 'all' : again ? 'finished' : undefined,
      timeoutMs: ctx.globals.timeout?.ms ?? DEFAULT_TIMEOUT_MS,
      stale: async (entries, at) => {
        const found = await memoryIsStale(p.api, entries, ctx.signal);
        if (found) stale = { ...found, at, cards: entries.filter(holdsCard).length };
        return found !== undefined;
      },
    }, ctx.secrets);
    if (stale) {
      status.info(
        `The ${plural(stale.cards, 'row')} imported into board ${p.api.board.id} on ${dateText(stale.at)} are no longer on it (${plural(stale.checked, 'card')} read back, none found): the board was emptied or replaced, so every row is sent again.`,
      );
    }
    // One status line each: a status line is escaped for the terminal, so a newline inside one would show as `\n`.
    if (journal.found && journal.previous.length > 0) for (const line of resumeText(journal, key, inFlightWaitMs(journal), plan.policy.concurrency)) status.info(line);
    return { lock, journal };
  } catch (err) {
    lock.release();
    throw fileError(err, { action: 'write the journal', path, hint });
  }
}

/**
 * How long from now rows that may still be landing (in flight when an earlier run stopped, or cut off)
 * must wait before they are looked for: until that run's own request timeout has passed since its last
 * journal write (a server may apply a request it received just before the kill up to then, and a read
 * before that would not find the card). Undefined when no such row is in the journal.
 */
function inFlightWaitMs(journal: Journal | undefined): number | undefined {
  const by = journal?.landsBy(DEFAULT_TIMEOUT_MS);
  return by === undefined ? undefined : Math.max(0, by - Date.now());
}

/** Clock time at which rows in flight at the end of the journal's earlier run may be looked for. */
function settleAt(ctx: Context, journal: Journal | undefined): number | undefined {
  const wait = inFlightWaitMs(journal);
  return wait === undefined ? undefined : ctx.clock.now() + wait;
}

/** Rows an earlier run finished with a card (created, updated or found): a resumed run skips them, and its progress starts there. */
function finishedBefore(j: Journal | undefined): number {
  let n = 0;
  for (const e of j?.previous ?? []) if (holdsCard(e)) n++;
  return n;
}

/**
 * What a run with a journal of earlier runs says first: a resume (the last run was cut off) names the rows
 * already finished; rows that may have been applied, and the wait for a killed run's requests; a journal
 * written for another input, content or mapping. A re-run of a complete import says nothing here: the
 * rows it skips are named once at the end (rememberedText).
 */
function resumeText(j: Journal, key: JournalKey, waitMs: number | undefined, concurrency: number): string[] {
  const found = j.found!;
  const count = new Map<string, number>();
  for (const e of j.previous) count.set(e.state, (count.get(e.state) ?? 0) + 1);
  const done = finishedBefore(j);
  const maybe = (count.get('uncertain') ?? 0) + (count.get('sending') ?? 0);
  const lines: string[] = [];
  if (!j.lastRunComplete()) lines.push(`Resuming: ${plural(done, 'row')} already finished (journal ${j.path}, started ${found.started}).`);
  if (maybe > 0) {
    lines.push(`${plural(maybe, 'row')} may have been applied (uncertain, or in flight when it stopped): the board is read for them before anything is sent again.`);
  }
  if (waitMs !== undefined && waitMs > 0) {
    const which = j.lastRunComplete() ? 'an earlier run that may still land' : 'the interrupted run';
    // In input order (concurrency 1) the rows after the first of them wait too (engine.ts, in-order.ts).
    const others = concurrency === 1 ? 'rows after them wait, to keep the file\'s order' : 'other rows go on meanwhile';
    lines.push(`Waiting ${Math.ceil(waitMs / 1000)}s for requests of ${which} (its --timeout since its last journal write) before reading the board for its rows in flight; ${others}.`);
  }
  const other: string[] = [];
  if (found.input !== key.input) other.push(`input ${found.input}`);
  if (found.sha256 !== key.sha256 || key.sha256 === undefined) other.push(key.sha256 === undefined ? 'stdin (whose content cannot be compared as a whole)' : 'other content');
  if (found.plan !== key.plan) other.push('another mapping or options');
  if (other.length > 0 && (lines.length > 0 || done > 0)) {
    lines.push(
      `The journal ${j.path} was written for ${other.join(', ')}: rows are matched to it by content, and a row changed since it was sent is sent again only by its _id or --match-on key (else rejected, naming its line).`,
    );
  }
  return lines;
}

/** The one line about rows earlier runs imported and this run skipped. */
function rememberedText(summary: ImportSummary, board: string, at: string | undefined): string {
  const sent = summary.rows - summary.skipped;
  const what = `${plural(summary.skipped, 'row')} ${summary.skipped === 1 ? 'was' : 'were'} imported into ${board} on ${dateText(at)}`;
  return sent === 0 ? `${what}; nothing to send (--again sends them as new cards).` : `${what} and ${summary.skipped === 1 ? 'was' : 'were'} not sent again (--again sends them as new cards).`;
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
  const held = await lockAndOpen(ctx, plan, p);
  const { journal } = held;
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
  // A resume starts its progress at the rows already finished; a re-run of a complete import counts the rows
  // it skips as they come (rows with a key are sent again, so the journal's count would overstate them).
  const progress = await startProgress(ctx, paths, p.scan?.records, journal?.lastRunComplete() ? 0 : finishedBefore(journal));
  let engine: Awaited<ReturnType<typeof runEngine>>;
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
      rerun: journal?.lastRunComplete() ?? false,
      match: p.match,
      force: policy.force,
      signal: ctx.cancel.drain,
      stopNow: ctx.signal,
      onEvent: (e) => {
        if (e.type === 'row') outputs.add(e.outcome);
        progress.event(e);
      },
    });
    // The journal is kept, whatever the end: it is the memory of this board's imports. A run that read its
    // input to the end says so, and the next one is a re-run (rows done are named once), not a resume.
    if (engine.summary.stopped === undefined) journal?.complete();
  } finally {
    undrain();
    clearInterval(flushTimer);
    outputs.close();
    journal?.close();
    held.lock.release();
  }
  const { summary, fatal } = engine;
  progress.done(summary);
  if (summary.skipped > 0 && journal?.lastRunComplete()) status.info(rememberedText(summary, p.api.board.alias ?? p.api.board.id, journal.lastImportAt()));
  if (paths.json) {
    const { rows, created, updated, found, unchanged, skipped, rejected, uncertain, settled, durationMs } = summary;
    const rowsPerSec = Math.round(rowsPerSecond({ rows, skipped, elapsedMs: durationMs }) * 10) / 10;
    // The same state names as --dry-run --json (with dryRun telling them apart), results files and the journal.
    await writeJson(ctx.stdout, { dryRun: false, rows, created, updated, found, unchanged, skipped, rejected, uncertain, settled, durationMs, rowsPerSec, results: paths.results ?? null, rejects: paths.rejects ?? null });
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
    const head = `${plural(summary.rejected, 'row')} rejected, ${groupDigits(summary.uncertain)} uncertain (the card may exist)`;
    const reasons = rejectedText(progress.problems, summary.rejected, paths.rejects);
    throw new PartialError(reasons.length > 0 ? `${head}:\n${reasons.join('\n')}` : `${head}.`, {
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
    lines.push('Pass --rejects FILE to get every one of those rows, with its reason, as a file to fix and import again with the same flags.');
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
