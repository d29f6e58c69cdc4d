// What an import says in words besides its progress and summary: what the run found before sending (a
// journal of earlier runs, a memory gone stale, no journal), the rows it did not send again, and the hint
// after rejected or uncertain rows.
import type { Context } from '../../context.js';
import type { Journal, JournalKey } from '../../import/journal.js';
import type { KeyIndex } from '../../import/match-index.js';
import type { ImportPlan } from '../../import/plan.js';
import { finishedBefore, type ResolvedImport, type RunNotice } from '../../import/run.js';
import type { ImportSummary } from '../../import/types.js';
import { plural } from '../../io/text.js';
import { importCommandLine, nextOutputName } from './command-line.js';

/** "2026-11-27 06:40 UTC" from an ISO time: the date a person reads of when rows were imported. */
function dateText(iso: string | undefined): string {
  const m = iso === undefined ? null : /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})/.exec(iso);
  return m ? `${m[1]} ${m[2]} UTC` : 'an earlier run';
}

/**
 * The status lines of a notice of the run, one line each: a status line is escaped for the terminal, so a
 * newline inside one would show as `\n`.
 */
export function noticeLines(notice: RunNotice, concurrency: number): string[] {
  switch (notice.type) {
    case 'no-journal':
      return ['Reading stdin: no journal is kept (pass --journal F to make this import resumable and remembered).'];
    case 'stale-memory':
      return [
        `The ${plural(notice.rows, 'row')} imported into board ${notice.board} on ${dateText(notice.at)} are no longer on it (${plural(notice.checked, 'card')} read back, none found): the board was emptied or replaced, so every row is sent again.`,
      ];
    case 'earlier-runs':
      return resumeText(notice.journal, notice.key, notice.waitMs, concurrency);
  }
}

/**
 * What a run with a journal of earlier runs says first: a resume (the last run was cut off) names the rows
 * already finished; rows that may have been applied, and the wait for a killed run's requests; a journal
 * written for another input, content or mapping. A re-run of a complete import says nothing here: the
 * rows it skips are named once at the end (rememberedText).
 */
function resumeText(journal: Journal, key: JournalKey, waitMs: number | undefined, concurrency: number): string[] {
  const found = journal.found!;
  const count = new Map<string, number>();
  for (const e of journal.previous) count.set(e.state, (count.get(e.state) ?? 0) + 1);
  const done = finishedBefore(journal);
  const maybe = (count.get('uncertain') ?? 0) + (count.get('sending') ?? 0);
  const lines: string[] = [];
  if (!journal.lastRunComplete()) lines.push(`Resuming: ${plural(done, 'row')} already finished (journal ${journal.path}, started ${found.started}).`);
  if (maybe > 0) {
    lines.push(`${plural(maybe, 'row')} may have been applied (uncertain, or in flight when it stopped): the board is read for them before anything is sent again.`);
  }
  if (waitMs !== undefined && waitMs > 0) {
    const which = journal.lastRunComplete() ? 'an earlier run that may still land' : 'the interrupted run';
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
      `The journal ${journal.path} was written for ${other.join(', ')}: rows are matched to it by content, and a row changed since it was sent is sent again only by its _id or --match-on key (else rejected, naming its line).`,
    );
  }
  return lines;
}

/** The one line about rows earlier runs imported and this run skipped. */
export function rememberedText(summary: ImportSummary, board: string, at: string | undefined): string {
  const sent = summary.rows - summary.skipped;
  const what = `${plural(summary.skipped, 'row')} ${summary.skipped === 1 ? 'was' : 'were'} imported into ${board} on ${dateText(at)}`;
  return sent === 0 ? `${what}; nothing to send (--again sends them as new cards).` : `${what} and ${summary.skipped === 1 ? 'was' : 'were'} not sent again (--again sends them as new cards).`;
}

/**
 * After rejected or uncertain rows: import the rejects file with the same flags (its outputs renamed so
 * it does not overwrite itself). Uncertain rows may be on the board: without --match-on or an _id
 * column, a re-import would create them twice, so the hint asks for a key instead.
 */
export function partialHint(ctx: Context, plan: ImportPlan, resolved: ResolvedImport, summary: ImportSummary, journalled: boolean): string {
  const { results, rejects } = plan.outputs;
  const keyed = plan.key.matchOn !== undefined || resolved.columns.some((c) => c.target.kind === 'id');
  const fields = resolved.columns.flatMap((c) => (c.target.kind === 'field' || c.target.kind === 'new' ? [c.target.field] : []));
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

/** Where the --match-on index came from, for --json: the pages read, or the mirror with its age. */
export function indexJson(match: KeyIndex): Record<string, unknown> {
  const { from, cards } = match;
  if (from.kind === 'pages') return { from: 'pages', pages: from.pages, cards };
  return { from: 'mirror', location: from.location, ageMs: from.ageMs === undefined ? null : Math.round(from.ageMs), reason: from.reason, cards };
}

/** The same for people: "21 pages, 1,000 cards" or "the mirror (pulled 3 min ago), 1,000 cards, no page read". */
function indexText(match: KeyIndex): string {
  const { from, cards } = match;
  if (from.kind === 'pages') return `${plural(from.pages, 'page')} read, ${plural(cards, 'card')}`;
  return `the mirror (${from.reason}), ${plural(cards, 'card')}, no page read`;
}

/** The summary's rows of --match-on and --mirror: where the index came from, and the cards saved to the mirror. */
export function matchRows(resolved: Pick<ResolvedImport, 'match' | 'mirror'>, mirrorSaved: number | undefined): [string, string][] {
  const rows: [string, string][] = [];
  if (resolved.match) rows.push(['index', indexText(resolved.match)]);
  if (resolved.mirror && mirrorSaved !== undefined) rows.push(['mirror', `${plural(mirrorSaved, 'card')} of this run saved to ${resolved.mirror.location}`]);
  return rows;
}
