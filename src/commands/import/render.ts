// How an import shows itself: a live progress line, the summary, and the --dry-run report.
import type { Context } from '../../context.js';
import type { KeyIndex } from '../../import/match-index.js';
import { DROPPED_TEXT, mappingToFile } from '../../import/mapping.js';
import type { DryRunReport, RowChanges } from '../../import/dry-run.js';
import type { ColumnMapping, ColumnWords, ImportEvent, ImportSummary } from '../../import/types.js';
import { rateText, rowsPerSecond } from '../../import/rate.js';
import { ROW_STATES } from '../../import/types.js';
import { createProgress } from '../../io/progress.js';
import { renderTable } from '../../io/table.js';
import { groupDigits, plural, terminalText } from '../../io/text.js';
import type { PlanOutputs } from '../../import/plan.js';
import { indexJson } from './messages.js';

/** Lines of the rows that did not make it, for the summary (the first 20 of each are listed). */
interface Problems {
  rejected: number[];
  uncertain: number[];
  /** The REASONS_SHOWN rejected rows of the lowest lines, with their reasons, in line order (rejectedText). */
  reasons: { line: number; reason: string }[];
}

/** Rejected rows whose reasons the end of a run shows on stderr; every one is in --rejects. */
const REASONS_SHOWN = 5;

/** Keep `line` among the REASONS_SHOWN lowest lines of `reasons` (rows end out of order with concurrency). */
function keepReason(reasons: Problems['reasons'], line: number, reason: string): void {
  if (reasons.length === REASONS_SHOWN && line > reasons[REASONS_SHOWN - 1]!.line) return;
  let at = reasons.length;
  while (at > 0 && reasons[at - 1]!.line > line) at--;
  reasons.splice(at, 0, { line, reason });
  if (reasons.length > REASONS_SHOWN) reasons.pop();
}

/**
 * The first rejected rows with their reasons, one line each (escaped: a reason quotes the input and the
 * server), then how many more and where they all are: `… and 7 more; all in --rejects fix.csv`.
 */
export function rejectedText(problems: Problems, rejected: number, rejects: string | undefined): string[] {
  const lines = problems.reasons.map((r) => `  line ${r.line}: ${terminalText(r.reason, { maxColumns: 200 })}`);
  const more = rejected - problems.reasons.length;
  const where = rejects === undefined ? '' : `; all in --rejects ${terminalText(rejects)}`;
  if (more > 0) lines.push(`  … and ${groupDigits(more)} more${where}`);
  return lines;
}

/** The live view of a run; `event` is cheap enough to call for every row. */
export interface ImportProgress {
  event(e: ImportEvent): void;
  done(summary: ImportSummary): void;
  problems: Problems;
}

function duration(ms: number): string {
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, '0')}s`;
  return `${Math.floor(seconds / 3600)}h${String(Math.floor((seconds % 3600) / 60)).padStart(2, '0')}m`;
}

/**
 * Start the progress line: ora on a terminal, a plain stderr line every few seconds otherwise, none with
 * --quiet/--json. `resumed` rows were finished by an earlier run (the journal's): the count starts there and
 * says so, and the engine's `skipped` events for those rows do not count them twice.
 */
export async function startProgress(ctx: Context, outputs: Pick<PlanOutputs, 'json'>, total: number | undefined, resumed = 0): Promise<ImportProgress> {
  const progress = await createProgress(ctx, { silent: outputs.json });
  // The engine's start (its 'start' event), as for the summary's durationMs: one rate, rate.ts.
  let started: number | undefined;
  let done = 0;
  let skipped = 0;
  let retries = 0;
  let waits = 0;
  let unchanged = 0;
  let lastDraw = 0;
  const problems: Problems = { rejected: [], uncertain: [], reasons: [] };
  const text = (elapsedMs = started === undefined ? 0 : ctx.clock.now() - started, finished?: number) => {
    const rate = rowsPerSecond({ rows: done, skipped, elapsedMs });
    // Rows the journal holds as finished are counted from the start; a skipped row beyond them (never, as
    // the engine skips only rows an earlier run finished) would still count once.
    const rows = finished ?? done - Math.min(skipped, resumed) + resumed;
    const count = total ? `${groupDigits(rows)} / ${plural(total, 'row')}` : plural(rows, 'row');
    const from = resumed > 0 ? ` (resumed at ${groupDigits(resumed)})` : '';
    const eta = total && rate > 0 && rows < total ? ` · ETA ${duration(((total - rows) / rate) * 1000)}` : '';
    const same = unchanged > 0 ? ` (${groupDigits(unchanged)} unchanged)` : '';
    return `Importing: ${count}${from}${same} · ${rateText(rate)}${eta} · ${plural(retries, 'retry', 'retries')} · ${plural(waits, 'wait')} (429)`;
  };
  progress.start(text());
  return {
    problems,
    event(event) {
      if (event.type === 'start') started = event.at;
      else if (event.type === 'row') {
        done++;
        if (event.outcome.state === 'unchanged') unchanged++;
        if (event.outcome.state === 'skipped') skipped++;
        const list = event.outcome.state === 'rejected' ? problems.rejected : event.outcome.state === 'uncertain' ? problems.uncertain : undefined;
        if (list && list.length < 20) list.push(event.outcome.line);
        if (event.outcome.state === 'rejected') keepReason(problems.reasons, event.outcome.line, event.outcome.message ?? '');
      } else if (event.type === 'retry') {
        retries++;
        if (event.reason === '429') waits++;
      }
      const now = ctx.clock.now();
      if (now - lastDraw >= 100) {
        lastDraw = now;
        progress.update(text());
      }
    },
    done(summary) {
      // The last line over the summary's own duration: the two rates are one number.
      const line = text(summary.durationMs, summary.rows);
      if (summary.stopped || summary.rejected + summary.uncertain > 0) progress.fail(line);
      else progress.succeed(line);
    },
  };
}

/** The end-of-run summary on stderr: counts per state, duration, rate, the report files, the lines to look at. */
export async function renderSummary(ctx: Context, summary: ImportSummary, problems: Problems, outputs: PlanOutputs, extra: [string, string][] = []): Promise<void> {
  if (ctx.globals.quiet) return;
  const rate = rowsPerSecond({ rows: summary.rows, skipped: summary.skipped, elapsedMs: summary.durationMs });
  const rows: [string, string | number][] = ROW_STATES.map((state) => [state, summary[state]]);
  rows.push(['rows', summary.rows], ['duration', duration(summary.durationMs)], ['rate', rateText(rate)]);
  rows.push(['retries', `${summary.retries} (${summary.waits} after 429)`]);
  if (summary.settled > 0) rows.push(['settled', `${summary.settled} (may have been applied: the board was read, nothing re-sent blindly)`]);
  rows.push(...extra);
  if (outputs.results) rows.push(['results', outputs.results]);
  if (outputs.rejects) rows.push(['rejects', outputs.rejects]);
  const out: string[] = [];
  if (ctx.stderr.isTTY) out.push(await renderTable(ctx, ['import', ''], rows, { stream: ctx.stderr }));
  else for (const [k, v] of rows) out.push(`${k.padEnd(10)} ${terminalText(String(v))}`);
  const list = (name: string, lines: number[], n: number) => {
    if (n > 0) out.push(`${name} ${n === 1 ? 'line' : 'lines'}: ${[...lines].sort((x, y) => x - y).join(', ')}${n > lines.length ? `, ... (${groupDigits(n)} in all)` : ''}`);
  };
  // A run that went to its end names its rejected rows in its error, with their reasons (rejectedText).
  if (summary.stopped !== undefined) list('rejected', problems.rejected, summary.rejected);
  list('uncertain', problems.uncertain, summary.uncertain);
  if (summary.found > 0) out.push(`Found rows were not created by this run: their cards were already on the board, stored by an earlier run's try (see --results).`);
  if (summary.uncertain > 0) out.push('Uncertain rows may or may not be on the board: check them before importing them again.');
  ctx.stderr.write(`${out.join('\n')}\n`);
}

/** Where a column goes, for people: the field, `_id`, or `(dropped)`; JSON says null (mappingToFile). */
function targetText(column: ColumnMapping): string {
  switch (column.target.kind) {
    case 'field':
      return column.target.field;
    case 'new':
      return `${column.target.field} (new field: needs Create Fields on)`;
    case 'id':
      return '_id';
    default:
      return DROPPED_TEXT;
  }
}

/**
 * The --dry-run report on stdout: mapping, first rows as they would be sent, and what would happen,
 * counted under the state names of a run (`created`, `updated`, `unchanged`, `rejected`). With --json,
 * the mapping is a --map-file object (header → field, `_id`, or null for a dropped column).
 */
export async function renderDryRun(
  ctx: Context,
  outputs: Pick<PlanOutputs, 'json'>,
  dryRun: { columns: ColumnMapping[]; report: DryRunReport; match?: KeyIndex; boardId: string; changes?: RowChanges[]; words: ColumnWords },
): Promise<void> {
  const { report } = dryRun;
  const dropped = dryRun.columns.filter((c) => c.target.kind === 'skip').map((c) => c.header);
  const added = dryRun.columns.flatMap((c) => (c.target.kind === 'new' ? [c.target.field] : []));
  if (outputs.json) {
    const { rows, created, updated, unchanged, rejected, rejections, sample } = report;
    const json = { dryRun: true, mapping: mappingToFile(dryRun.columns), newFields: added, rows, created, updated, unchanged, rejected, rejections, sample, changes: dryRun.changes ?? [], ...(dryRun.match ? { index: indexJson(dryRun.match) } : {}) };
    ctx.stdout.write(`${JSON.stringify(json, null, 2)}\n`);
    return;
  }
  const out: string[] = [`Dry run against board ${dryRun.boardId}: nothing was sent.`, '', 'Mapping:'];
  for (const c of dryRun.columns) out.push(`  ${c.header} -> ${targetText(c)}   [${c.how}]`);
  out.push('', 'First rows as they would be sent:');
  for (const s of report.sample) out.push(`  line ${s.line}: ${JSON.stringify(s.body)}`);
  if (report.sample.length === 0) out.push('  (none)');
  out.push('', `Would send ${groupDigits(report.rows - report.rejected - report.unchanged)} of ${plural(report.rows, 'row')}; a run would end with:`);
  out.push(`  created ${report.created}`);
  out.push(`  updated ${report.updated}${dryRun.match ? ` (by ${dryRun.match.field}; ${dryRun.match.from.kind === 'mirror' ? `${plural(dryRun.match.cards, 'card')} in the mirror, ${dryRun.match.from.reason}` : `${plural(dryRun.match.cards, 'card')} on the board`})` : ' (rows with an _id)'}`);
  if (dryRun.match) out.push(`  unchanged ${report.unchanged} (equal to their card: not sent)`);
  out.push(`  rejected ${report.rejected}`);
  for (const r of report.rejections) out.push(`    line ${r.line}: ${r.reason}`);
  if (dryRun.changes?.length) out.push('', 'What the first updates change:');
  for (const u of dryRun.changes ?? []) out.push(`  line ${u.line}: ${u.changes.map((c) => `${c.field}: ${c.from} → ${c.to}`).join(', ') || '(no visible change)'}`);
  const what = dryRun.words.short === 'key' ? 'Keys' : 'Columns';
  if (dropped.length) out.push(`${what} dropped: ${dropped.join(', ')}`);
  if (added.length) out.push(`${what} sent as new fields: ${dryRun.columns.filter((c) => c.target.kind === 'new').map((c) => c.header).join(', ')}`);
  // A report for people even when piped (--json is the machine form): headers and values are escaped.
  ctx.stdout.write(`${out.map((line) => terminalText(line)).join('\n')}\n`);
}
