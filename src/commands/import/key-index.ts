// The --match-on index of an import: from the board's mirror when --mirror finds it fresh (no page read),
// else from every page of the board, with progress on stderr (a large board takes a while).
import type { ApiClient } from '../../api/types.js';
import type { Context } from '../../context.js';
import { type KeyIndex, loadKeyIndex } from '../../import/match-index.js';
import { findMirror, mirrorKeyIndex } from '../../import/mirror-index.js';
import type { ImportPlan } from '../../import/plan.js';
import type { MirrorStore } from '../../mirror/types.js';
import { createProgress, pagesText } from '../../io/progress.js';
import { createStatus } from '../../io/status.js';
import { plural } from '../../io/text.js';

/** The index, and with --mirror the mirror found (fresh or not): the run keeps its writes there. */
export interface MatchIndex {
  index: KeyIndex;
  mirror?: MirrorStore;
}

/** Read the index for --match-on `field` over the sent `fields`: from a fresh mirror with --mirror, else from the pages. */
export async function readKeyIndex(ctx: Context, api: ApiClient, plan: ImportPlan, field: string, fields: string[]): Promise<MatchIndex> {
  const wanted = plan.key.mirror;
  if (wanted === undefined) return { index: await readPages(ctx, api, plan.outputs.json, field, fields) };
  const status = createStatus(ctx);
  const { store, freshness } = await findMirror(ctx.env, api.board, wanted.maxAgeMs, ctx.clock.now());
  try {
    if (store && freshness.fresh) {
      const index = mirrorKeyIndex(store, freshness, field, fields);
      status.info(`Key index for --match-on ${field} from the mirror (${freshness.reason}): ${plural(index.cards, 'card')}, no page read.`);
      return { index, mirror: store };
    }
    status.warn(`The mirror is not used for --match-on ${field}: ${freshness.reason}. Reading the board's pages.`);
    return { index: await readPages(ctx, api, plan.outputs.json, field, fields), mirror: store };
  } catch (err) {
    store?.close();
    throw err;
  }
}

/** Read the board's pages for --match-on with progress on stderr (pages, cards). */
async function readPages(ctx: Context, api: ApiClient, json: boolean, field: string, fields: string[]): Promise<KeyIndex> {
  const progress = await createProgress(ctx, { silent: json });
  progress.start(`Reading the board for --match-on ${field}…`);
  let read = { pages: 0, cards: 0 };
  try {
    const index = await loadKeyIndex(api, field, fields, ctx.signal, (r) => {
      read = r;
      if (!json && !ctx.globals.quiet) progress.update(pagesText(r));
    });
    progress.succeed(pagesText(read).replace(/^Reading/, 'Read'));
    return index;
  } catch (err) {
    progress.stop();
    throw err;
  }
}
