// `mirror pull --every`: the way to watch a board where webhooks cannot reach. Each change a pull makes to the
// mirror is printed as `webhook listen` prints a delivery's change; a summary line per pull on stderr.
import type { ApiClient } from '../../api/types.js';
import type { Context } from '../../context.js';
import { ApiError } from '../../errors.js';
import { classify } from '../../http/failure.js';
import { createStatus } from '../../io/status.js';
import { plural } from '../../io/text.js';
import { terminalJson } from '../../io/terminal-json.js';
import { type PullEvent, pullEvery, pullMirror } from '../../mirror/pull.js';
import type { MirrorChange, MirrorStore } from '../../mirror/types.js';
import { type Duration, formatDuration } from '../../units.js';
import { changeJsonLine, changeLine, deliveryChange } from './changes.js';
import { budgetText, overBudgetText, pullFailure, resumedText, summaryText } from './pull-render.js';

/** A failure worth another pull at the next turn: the server or the network, not a refusal (a bad token, a 404). */
function passing(err: unknown): err is ApiError {
  return err instanceof ApiError && classify(err).kind !== 'refused' && classify(err).heals;
}

/** Pull every `every` until Ctrl-C, printing each change; returns once stopped between pulls (main ends by the signal). */
export async function pullEveryScreen(ctx: Context, api: ApiClient, store: MirrorStore, every: Duration, json: boolean): Promise<void> {
  const status = createStatus(ctx);
  // As `webhook listen`: a line a person reads on a terminal, JSON lines when asked or piped.
  const asJson = json || !ctx.stdout.isTTY;
  const tty = ctx.stdout.isTTY === true;
  const stated = (pages: number | undefined) => {
    const budget = budgetText(pages, every);
    status.info(budget.line);
    if (budget.over) status.warn(overBudgetText(every));
  };
  let lastPages = store.status().lastPull?.pages;
  stated(lastPages);
  const show = (changes: readonly MirrorChange[], pull: number) => {
    const at = new Date(ctx.clock.now()).toISOString();
    for (const change of changes) {
      const shown = deliveryChange(change);
      if (shown.event === 'unchanged') continue;
      const line = asJson ? changeJsonLine(shown, at, pull) : changeLine(shown, at);
      ctx.stdout.write(`${asJson && tty ? terminalJson(line) : line}\n`);
    }
  };
  // The changes of a pull into a mirror that never had a complete one are the whole board: not printed.
  let known = lastPages !== undefined;
  let pull = 0;
  const onEvent = (event: PullEvent) => {
    if (event.type === 'begun') {
      pull = event.pull.id;
      if (event.pull.resumed) status.info(resumedText(event.pull));
    } else if (!known) return;
    else if (event.type === 'page' || event.type === 'deleted') show(event.changes, pull);
    else if (event.type === 'verified' && event.change) show([event.change], pull);
  };
  const pulls = await pullEvery(
    async () => {
      try {
        return await pullMirror(api, store, { signal: ctx.signal, clock: ctx.clock, onEvent });
      } catch (err) {
        // Stopped by the user: where the next pull resumes. Any other failure is told by onFailure.
        throw ctx.signal.aborted ? pullFailure(ctx, store, err) : err;
      }
    },
    {
      everyMs: every.ms,
      signal: ctx.signal,
      clock: ctx.clock,
      onPulled: (summary) => {
        const next = new Date(ctx.clock.now() + every.ms).toISOString().slice(11, 19);
        status.info(`${summaryText(summary)} Next pull at ${next} UTC.`);
        if (lastPages === undefined) stated(summary.pages);
        lastPages = summary.pages;
        known = true;
      },
      onFailure: (err) => {
        if (!passing(err)) return false;
        status.warn(`${err.message} The pull goes on where it stopped in ${formatDuration(every)}.`);
        return true;
      },
    },
  );
  status.info(`Stopped after ${plural(pulls, 'pull')}.`);
}
