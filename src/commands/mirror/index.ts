import type { Command } from 'commander';
import type { ContextRef } from '../../context.js';
import { nounSummary } from '../nouns.js';
import { mirrorPullCommand } from './pull.js';
import { mirrorStatusCommand } from './status.js';

const EXAMPLES = `
The mirror is a SQLite file per board (CARDBOARD_MIRROR sets its path) that other tools open as it is:
the sqlite3 shell, Python, Datasette. Or, with CARDBOARD_MIRROR=postgres://…, tables in a PostgreSQL
database that hold every board, which one listener keeps for a team and any PostgreSQL client reads.
See docs/mirror.md.

Examples:
  $ cardboard mirror pull && cardboard mirror status
  $ cardboard mirror pull --every 5m`;

/** Register `mirror` with its verbs pull and status. */
export function register(program: Command, ctx: ContextRef): void {
  const mirror = program.command('mirror').description(nounSummary('mirror')).addHelpText('after', EXAMPLES);
  mirrorPullCommand(mirror, ctx);
  mirrorStatusCommand(mirror, ctx);
}
