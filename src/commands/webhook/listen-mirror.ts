// `webhook listen --mirror`: the selected board's mirror, opened by the engine at start.
import { resolveSelection } from '../../config/index.js';
import type { Context } from '../../context.js';
import { UsageError } from '../../errors.js';
import { openMirror } from '../../mirror/open.js';
import type { MirrorStore } from '../../mirror/types.js';
import { selectedMirrorBoard } from '../mirror/open-board.js';

/** The selected board's mirror, created if need be; a UsageError (exit 2) when no board is selected. */
export async function listenMirror(ctx: Context): Promise<{ open(): MirrorStore }> {
  const selection = resolveSelection(ctx, await ctx.config.read());
  if (!selection.id) {
    throw new UsageError('--mirror needs a board: no board selected (a mirror holds one board).', {
      hint: 'Pass --board <alias-or-id>, set CARDBOARD_BOARD, or store one with `cardboard board add <alias> --url <POST URL>`.',
    });
  }
  if (!selection.baseUrl) {
    throw new UsageError(`--mirror: no base URL for board ${selection.id.value}: it is not a stored alias or board id.`, {
      hint: 'Pass --base-url or set CARDBOARD_BASE_URL, or store the board with `cardboard board add`.',
    });
  }
  const board = await selectedMirrorBoard(ctx);
  return { open: () => openMirror(ctx.env, board, { create: true }) };
}
