// The mirror of the selected board: its identity (the service whatever its URL's spelling, and the board)
// and its store, opened or created.
import type { ApiClient } from '../../api/types.js';
import type { Context } from '../../context.js';
import { serverIdentity } from '../../import/board-lock.js';
import { openMirror } from '../../mirror/open.js';
import type { MirrorBoard, MirrorStore } from '../../mirror/types.js';

/** Which mirror the selected board has: its base URL as configured, the server's identity, the board's id. */
export async function mirrorBoard(api: Pick<ApiClient, 'board'>): Promise<MirrorBoard> {
  const { baseUrl, id } = api.board;
  return { baseUrl, server: await serverIdentity(baseUrl), id };
}

/** Open the selected board's mirror; `create` makes it when there is none (else openMirror's error names the fix). */
export async function openBoardMirror(ctx: Context, api: Pick<ApiClient, 'board'>, create: boolean): Promise<MirrorStore> {
  return openMirror(ctx.env, await mirrorBoard(api), { create });
}
