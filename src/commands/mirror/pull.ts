import type { Command } from 'commander';
import type { ApiClient } from '../../api/types.js';
import type { Context, ContextRef } from '../../context.js';
import { UsageError } from '../../errors.js';
import { createProgress, pagesText } from '../../io/progress.js';
import { createStatus } from '../../io/status.js';
import { groupDigits, plural } from '../../io/text.js';
import { writeJson } from '../../io/write.js';
import { type PullEvent, pullMirror } from '../../mirror/pull.js';
import type { MirrorStore } from '../../mirror/types.js';
import { type Duration, formatDuration, readDuration } from '../../units.js';
import { pullEveryScreen } from './every.js';
import { openBoardMirror } from './open-board.js';
import { pullFailure, resumedText, summaryJson, summaryText } from './pull-render.js';

/** What `mirror pull` does. */
export interface MirrorPullOptions {
  /** Pull again this long after each pull ends, until Ctrl-C. */
  every?: Duration;
  json: boolean;
  /** Abandon a pull an earlier process left unfinished, and walk from page 0. */
  restart?: boolean;
}

/** The shortest --every: a pull of a small board takes a few requests, and a shorter wait watches no better. */
export const MIN_EVERY_MS = 10_000;

const EXAMPLES = `
Reads every page of the board into its mirror (a SQLite file, or PostgreSQL with
CARDBOARD_MIRROR=postgres://…; see \`cardboard mirror status\`), at the client's rate, with progress on
stderr, then reconciles: a card no page showed is read alone (GET) before it is deleted from the mirror,
since pages shift while cards change (spec 4.5). Ctrl-C stops after the page in hand is saved and ends
by SIGINT (130); the next pull resumes after it, even after kill -9.
--restart abandons such an unfinished pull and reads the board again from page 0 (the cards it saved stay).
One pull of a mirror at a time, wherever it runs (a lock beside the file, or on the PostgreSQL server).
--json prints the summary as JSON.
--every pulls again and again until Ctrl-C, and prints each card a pull found new, changed or deleted, in
the line and JSON shapes of \`webhook listen\` (--json, or piped: one JSON line each); it states its
request budget at start. The first pull of an empty mirror prints no change lines.

Examples:
  $ cardboard mirror pull
  $ cardboard mirror pull --every 5m
  $ cardboard mirror pull --restart`;

/** Define `mirror pull` under `parent`; `run` is replaceable so parse tests can spy on the options. */
export function mirrorPullCommand(parent: Command, ctx: ContextRef, run = runMirrorPull): Command {
  return parent
    .command('pull')
    .description('Read every page of the board into its mirror; --every: again and again')
    .option('--every <duration>', `pull again this long after each pull ends, until Ctrl-C (at least ${formatDuration(MIN_EVERY_MS)})`)
    .option('--json', 'print the summary (with --every: each change) as JSON')
    .option('--restart', 'abandon an unfinished pull and read the board from page 0')
    .addHelpText('after', EXAMPLES)
    .action(async (flags: { every?: string; json?: boolean; restart?: boolean }) => {
      const every = flags.every === undefined ? undefined : readDuration(flags.every, '--every');
      if (every && every.ms < MIN_EVERY_MS) {
        throw new UsageError(`--every ${every.text} is shorter than ${formatDuration(MIN_EVERY_MS)}`, { hint: `Give --every ${formatDuration(MIN_EVERY_MS)} or more (e.g. --every 5m).` });
      }
      await run(ctx(), { ...(every ? { every } : {}), json: flags.json ?? false, ...(flags.restart ? { restart: true } : {}) });
    });
}

/** Pull the selected board into its mirror once, or with --every until Ctrl-C; one pull of a mirror at a time. */
export async function runMirrorPull(ctx: Context, opts: MirrorPullOptions): Promise<void> {
  const api = await ctx.api();
  const store = await openBoardMirror(ctx, api, true);
  try {
    const lock = await store.lockPull(ctx.clock);
    try {
      if (opts.restart) abandon(ctx, store);
      if (opts.every) await pullEveryScreen(ctx, api, store, opts.every, opts.json);
      else await pullOnce(ctx, api, store, opts.json);
    } finally {
      lock.release();
    }
  } finally {
    store.close();
  }
}

/** --restart: the unfinished pull is abandoned (said on stderr), so that the pull begins at page 0. */
function abandon(ctx: Context, store: MirrorStore): void {
  const left = store.abandonPull();
  const status = createStatus(ctx);
  if (left) status.info(`Abandoned pull #${left.id} begun ${left.startedAt} at page ${groupDigits(left.nextPage)}; reading the board from page 0.`);
  else status.info('No unfinished pull to abandon; reading the board from page 0.');
}

/** One pull with progress on stderr, then its summary (a line on stderr, or JSON on stdout). */
async function pullOnce(ctx: Context, api: ApiClient, store: MirrorStore, json: boolean): Promise<void> {
  const status = createStatus(ctx);
  const progress = await createProgress(ctx, { silent: json });
  const onEvent = (event: PullEvent) => {
    if (event.type === 'begun') {
      if (event.pull.resumed) status.info(resumedText(event.pull));
      progress.start('Reading the board…');
    } else if (event.type === 'page') progress.update(pagesText(event.read));
    else if (event.type === 'reconcile' && event.toVerify > 0) progress.update(`Reading alone ${plural(event.toVerify, 'card')} no page showed (GET each)`);
  };
  let summary;
  try {
    summary = await pullMirror(api, store, { signal: ctx.signal, clock: ctx.clock, onEvent });
  } catch (err) {
    progress.stop();
    throw pullFailure(ctx, store, err);
  }
  progress.stop();
  if (json) await writeJson(ctx.stdout, summaryJson(store.location, summary));
  else status.info(summaryText(summary));
}
