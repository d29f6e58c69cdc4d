import type { Command } from 'commander';
import type { Context, ContextRef } from '../../context.js';
import { createStatus } from '../../io/status.js';
import { writeChunk, writeJson } from '../../io/write.js';
import { DEFAULT_MAX_AGE_MS, freshness } from '../../mirror/fresh.js';
import { openBoardMirror } from './open-board.js';
import { statusJson, statusLines } from './status-render.js';

/** What `mirror status` prints. */
export interface MirrorStatusOptions {
  json: boolean;
}

const EXAMPLES = `
Where the selected board's mirror is, the cards it holds, its last complete pull and any pull begun and
not finished, the deliveries \`webhook listen --mirror\` applied since, whether a listener feeds it now,
and how fresh it is. Makes no request to the service. A board never pulled: exit 1, naming the command
that makes its mirror.

Examples:
  $ cardboard mirror pull && cardboard mirror status
  $ cardboard mirror pull --quiet && cardboard mirror status --json | jq .freshness`;

/** Define `mirror status` under `parent`; `run` is replaceable so parse tests can spy on the options. */
export function mirrorStatusCommand(parent: Command, ctx: ContextRef, run = runMirrorStatus): Command {
  return parent
    .command('status')
    .description("Show where the board's mirror is, what it holds and how fresh it is")
    .option('--json', 'print the status as JSON')
    .addHelpText('after', EXAMPLES)
    .action(async (flags: { json?: boolean }) => {
      await run(ctx(), { json: flags.json ?? false });
    });
}

/** Read the mirror's status (no request to the service) and print it as lines, or JSON. */
export async function runMirrorStatus(ctx: Context, opts: MirrorStatusOptions): Promise<void> {
  const api = await ctx.api();
  const store = await openBoardMirror(ctx, api, false);
  let status;
  try {
    status = store.status();
  } finally {
    store.close();
  }
  const now = ctx.clock.now();
  const fresh = freshness(status, DEFAULT_MAX_AGE_MS, now);
  if (opts.json) return writeJson(ctx.stdout, statusJson(status, fresh, now));
  for (const line of statusLines(status, fresh, now)) await writeChunk(ctx.stdout, `${line}\n`);
  if (status.openPull) createStatus(ctx).info('A pull is open: `cardboard mirror pull` goes on with it (or it is running now).');
}
