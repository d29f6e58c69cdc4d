// A board's mirror filled through the store itself (dist/mirror), as one complete pull that ended now leaves
// it: what the scenarios that read a mirror start from.
import { BOARD } from './emulator.mjs';

/**
 * Fill the mirror `env` selects (CARDBOARD_MIRROR) of the bench board at `baseUrl` with `cards`, `pageSize`
 * a page. opts.schema: read the board's schema first (with env.CARDBOARD_TOKEN) and save it, as a pull does;
 * opts.fields: save these fields as the schema instead (one read of it for several mirrors).
 */
export async function fillMirror(env, baseUrl, cards, opts = {}) {
  const { openMirror } = await import('../../../dist/mirror/open.js');
  const { serverIdentity } = await import('../../../dist/import/board-lock.js');
  const { checkBaseUrl } = await import('../../../dist/http/url.js');
  const url = checkBaseUrl(baseUrl, true);
  const pageSize = opts.pageSize ?? 50;
  const store = openMirror(env, { id: BOARD, baseUrl: url, server: await serverIdentity(url) }, { create: true });
  try {
    if (opts.fields) store.saveSchema(opts.fields);
    else if (opts.schema) {
      const schema = await fetch(`${url}/api/aptlet/${BOARD}/schema`, { headers: { 'x-token': env.CARDBOARD_TOKEN } });
      store.saveSchema(await schema.json());
    }
    const now = new Date().toISOString();
    const pull = store.beginPull(now);
    for (let page = 0; page * pageSize < cards.length; page++) store.savePage(pull, page, cards.slice(page * pageSize, (page + 1) * pageSize));
    store.finishPull(pull, [], now);
  } finally {
    store.close();
  }
}
