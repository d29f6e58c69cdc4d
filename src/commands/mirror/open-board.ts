// The mirror of the selected board: its identity (the service whatever its URL's spelling, and the board)
// and its store, opened or created.
import type { ApiClient } from '../../api/types.js';
import type { Context } from '../../context.js';
import { resolveBoard } from '../../config/resolve.js';
import { checkBaseUrl } from '../../http/url.js';
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

/**
 * The selected board as a mirror knows it, from the flags, the environment and the config alone: no request
 * (the token is not needed either). The base URL is read as a request would send it, and the server named by
 * serverIdentity, so that every spelling of one service finds one mirror.
 */
export async function selectedMirrorBoard(ctx: Context): Promise<MirrorBoard> {
  const { id, baseUrl: raw } = resolveBoard(ctx, await ctx.config.read());
  // No token crosses the network here, so plain http is no reason to refuse: the URL is only normalised.
  const baseUrl = checkBaseUrl(raw, true);
  return { id, baseUrl, server: await serverIdentity(baseUrl) };
}
