// What `mirror pull` says: the resume, the summary line and its JSON, the request budget of --every.
import type { Context } from '../../context.js';
import { CancelledError } from '../../errors.js';
import { RATE_LIMIT_FACT } from '../../http/failure.js';
import { createStatus } from '../../io/status.js';
import { groupDigits, plural } from '../../io/text.js';
import type { PullSummary } from '../../mirror/pull.js';
import type { MirrorStore, PullCursor } from '../../mirror/types.js';
import { type Duration, formatDuration } from '../../units.js';

/** The service's limit per API key, per minute (RATE_LIMIT_FACT). */
export const BOARD_LIMIT_PER_MINUTE = 120;

/** The line of a pull that goes on with one an earlier process left. */
export function resumedText(cursor: PullCursor): string {
  return `Resuming pull #${cursor.id} begun ${cursor.startedAt} at page ${groupDigits(cursor.nextPage)} (${plural(cursor.pages, 'page')}, ${plural(cursor.cards, 'card')} saved before it stopped).`;
}

function seconds(ms: number): string {
  return ms < 10_000 ? `${(ms / 1000).toFixed(1)}s` : formatDuration(Math.round(ms / 1000) * 1000);
}

/** One line at the end of a pull: what it read, what it changed, how it checked, what it cost. */
export function summaryText(s: PullSummary): string {
  const resumed = s.resumedAt ? ` (resumed at page ${groupDigits(s.resumedAt.page)})` : '';
  const checks = `${groupDigits(s.verified)} verified by GET, ${groupDigits(s.unconfirmed)} kept unconfirmed`;
  return (
    `Pulled ${plural(s.pages, 'page')}, ${plural(s.cards, 'card')}${resumed}: ${groupDigits(s.new)} new, ${groupDigits(s.changed)} changed, ` +
    `${groupDigits(s.deleted)} deleted; ${checks}; ${plural(s.requests, 'request')} in ${seconds(s.ms)}. The mirror holds ${plural(s.total, 'card')}.`
  );
}

/** The summary as JSON (`mirror pull --json`): PullSummary's keys, `location` first. */
export function summaryJson(location: string, s: PullSummary): Record<string, unknown> {
  return { location, ...s };
}

/** What the user is told to do after an interrupted pull. */
export function resumeHint(): string {
  return 'Run `cardboard mirror pull` again to resume: it goes on after the last page saved.';
}

/** Requests of one pull of a board of `pages` pages: the schema, the pages, the empty page, and at most this many GETs. */
export function pullRequests(pages: number): { least: number; most: number } {
  const least = pages + 2;
  return { least, most: least + Math.max(20, pages) };
}

/**
 * The budget `--every` states at start: requests per pull from the last pull's page count, and per minute
 * against the board's limit when pulls start every `every` (a pull that takes longer than that runs back to
 * back with the next, at the client's rate). `undefined` pages: the mirror was never pulled.
 */
export function budgetText(pages: number | undefined, every: Duration): { line: string; over: boolean } {
  if (pages === undefined) {
    return { line: `Pulling every ${formatDuration(every)}: the first pull reads every page; each pull after it costs its pages + 2 requests (and a GET per card it could not find, at most max(20, pages)).`, over: false };
  }
  const { least, most } = pullRequests(pages);
  const perMinute = (least * 60_000) / every.ms;
  const over = perMinute > BOARD_LIMIT_PER_MINUTE;
  const rate = perMinute >= 10 ? Math.round(perMinute) : Math.round(perMinute * 10) / 10;
  const line =
    `Pulling every ${formatDuration(every)}: ${groupDigits(least)} requests a pull (${plural(pages, 'page')} + 2; up to ${groupDigits(most)} when cards must be verified), ` +
    `about ${rate} a minute of the board's ${BOARD_LIMIT_PER_MINUTE}.`;
  return { line, over };
}

/** The warning of an interval whose pulls would take the whole limit. */
export function overBudgetText(every: Duration): string {
  return `every ${formatDuration(every)} asks for more than the board's ${BOARD_LIMIT_PER_MINUTE} requests a minute: pulls will run back to back at the client's rate, and other commands with the company's keys will wait. ${RATE_LIMIT_FACT} Choose a longer --every, or keep the mirror fresh with \`webhook listen --mirror\`.`;
}

/**
 * What a failed pull becomes: stopped by the user, a CancelledError naming the page it resumes at (main
 * ends the run by the signal); any other failure as it is, after a line saying the pages read stay saved.
 */
export function pullFailure(ctx: Context, store: MirrorStore, err: unknown): unknown {
  const open = store.status().openPull;
  if (!open) return err;
  const where = `pull #${open.id} stopped at page ${open.nextPage} (${plural(open.pages, 'page')}, ${plural(open.cards, 'card')} saved)`;
  if (ctx.signal.aborted) return new CancelledError(`Interrupted: ${where}.`, { hint: resumeHint(), cause: err });
  createStatus(ctx).warn(`${where}. ${resumeHint()}`);
  return err;
}
