// Executing an import: the run's files opened (import/run.ts), Ctrl-C, progress, the engine, and the summary.
import type { Context } from '../../context.js';
import { CancelledError, PartialError } from '../../errors.js';
import { DEFAULT_TIMEOUT_MS } from '../../http/index.js';
import { checkOutputPaths } from '../../import/path-guard.js';
import type { ImportPlan } from '../../import/plan.js';
import { columnWords } from '../../import/types.js';
import { rowsPerSecond } from '../../import/rate.js';
import { describeChanges, dryRun } from '../../import/dry-run.js';
import type { EngineResult } from '../../import/engine.js';
import { ImportRun, type ResolvedImport } from '../../import/run.js';
import { createStatus } from '../../io/status.js';
import { writeJson } from '../../io/write.js';
import { importCommandLine } from './command-line.js';
import { indexJson, matchRows, noticeLines, partialHint, rememberedText } from './messages.js';
import { type ImportDeps, resolveImport } from './resolve.js';
import { type ImportProgress, rejectedText, renderDryRun, renderSummary, startProgress } from './render.js';
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
  try {
    if (plan.policy.dryRun) await dryRunImport(ctx, plan, resolved);
    else await executeImport(ctx, plan, resolved);
  } finally {
    resolved.mirror?.close();
  }
}

/** --dry-run: what a run would do, sending nothing; exit 3 when it would reject rows. */
async function dryRunImport(ctx: Context, plan: ImportPlan, resolved: ResolvedImport): Promise<void> {
  const { outputs } = plan;
  const { columns, match, items, api } = resolved;
  const report = await dryRun(items, { columns, sendEmpty: resolved.sendEmpty, match, force: plan.policy.force });
  // With the index from the mirror, the cards it compared against are the mirror's: no GET.
  const { mirror } = resolved;
  const cards = mirror && match?.from.kind === 'mirror' ? { getCard: async (id: string) => mirror.card(id) ?? Promise.reject(new Error(`${id}: not in the mirror`)) } : api;
  const changes = await describeChanges(cards, report.updateSample);
  await renderDryRun(ctx, outputs, { columns, report, match, boardId: api.board.id, changes, words: columnWords(plan.source.format) });
  // A dry run is a CI gate: rows a run would reject end it as such a run would end (exit 3).
  if (report.rejected > 0) {
    throw new PartialError(`--dry-run: ${plural(report.rejected, 'row')} of ${groupDigits(report.rows)} would be rejected; nothing was sent.`, {
      hint: `Fix the input first: a run would reject ${report.rejected === 1 ? 'that row' : 'those rows'} (exit 3). The report names each with its reason${outputs.json ? ' ("rejections", the first 20)' : ''}.`,
    });
  }
}

/**
 * After the first Ctrl-C, how long requests in flight may take to be answered; then they are cut off and
 * their rows left uncertain (the next run reads the board for them before sending anything again).
 */
const IN_FLIGHT_GRACE_MS = 2000;

/** Send every row through the engine, write the reports, and end with the exit the summary calls for. */
async function executeImport(ctx: Context, plan: ImportPlan, resolved: ResolvedImport): Promise<void> {
  const { outputs: paths, policy } = plan;
  const status = createStatus(ctx);
  const env = { clock: ctx.clock, stopNow: ctx.signal, drain: ctx.drain.signal, secrets: ctx.secrets, timeoutMs: ctx.globals.timeout?.ms ?? DEFAULT_TIMEOUT_MS };
  const run = await ImportRun.open(plan, resolved, env, (n) => {
    for (const line of noticeLines(n, policy.concurrency)) status.info(line);
  });
  const { journal } = run;
  const undrain = ctx.drain.enable({
    graceMs: IN_FLIGHT_GRACE_MS,
    onFirst: () => status.warn(`Interrupted: finishing the requests in flight for up to ${IN_FLIGHT_GRACE_MS / 1000}s (Ctrl-C again to quit at once)...`),
  });
  let progress: ImportProgress;
  let engine: EngineResult;
  try {
    progress = await startProgress(ctx, paths, resolved.scan?.records, run.startsAt);
    engine = await run.send((e) => progress.event(e));
  } finally {
    undrain();
    run.close();
  }
  const { summary, fatal } = engine;
  progress.done(summary);
  if (summary.skipped > 0 && journal?.lastRunComplete()) status.info(rememberedText(summary, resolved.api.board.alias ?? resolved.api.board.id, journal.lastImportAt()));
  if (paths.json) {
    const { rows, created, updated, found, unchanged, skipped, rejected, uncertain, settled, durationMs } = summary;
    const rowsPerSec = Math.round(rowsPerSecond({ rows, skipped, elapsedMs: durationMs }) * 10) / 10;
    // The same state names as --dry-run --json (with dryRun telling them apart), results files and the journal.
    const match = resolved.match ? { index: indexJson(resolved.match) } : {};
    const mirror = resolved.mirror ? { mirror: { location: resolved.mirror.location, saved: run.mirrorWrites?.applied ?? 0 } } : {};
    await writeJson(ctx.stdout, { dryRun: false, rows, created, updated, found, unchanged, skipped, rejected, uncertain, settled, durationMs, rowsPerSec, results: paths.results ?? null, rejects: paths.rejects ?? null, ...match, ...mirror });
  } else {
    await renderSummary(ctx, summary, progress.problems, paths, matchRows(resolved, run.mirrorWrites?.applied));
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
      hint: partialHint(ctx, plan, resolved, summary, journal !== undefined),
    });
  }
}
