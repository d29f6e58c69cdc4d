import { readSchemaCache, writeSchemaCache } from '../config/schema-cache.js';
import { ApiError, CardboardError } from '../errors.js';
import { type Http, namingBodySize, path } from '../http/index.js';
import { notice } from '../io/notice.js';
import type { Card, Comment, Field } from '../spec-types.js';
import { SeenIds } from './seen-ids.js';
import type { ApiClient, ApiContext, ResolvedBoard } from './types.js';

function unexpected(what: string, url: string): CardboardError {
  return new CardboardError(`The service answered ${what} from ${url}, which is not what the spec describes.`, {
    hint: 'Check the base URL: it should be the service root, not a web page.',
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Validate a schema answer (spec 4.2, 2.3): an array of field objects with a string name, or `{"fields": [...]}`. */
function toFields(body: unknown, url: string): Field[] {
  const list = isObject(body) && Array.isArray(body.fields) ? body.fields : body;
  if (!Array.isArray(list) || !list.every((f) => isObject(f) && typeof f.name === 'string')) {
    throw unexpected('a schema that is not a list of named fields', url);
  }
  return list as Field[];
}

function describeEntry(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value !== 'object') return `a ${typeof value}`;
  return 'an object without a string `_id`';
}

function notACard(value: unknown, page: number, index: number, url: string): CardboardError {
  return new CardboardError(`The service answered page ${page} of ${url} with ${describeEntry(value)} at index ${index}, not a card with a string \`_id\`; the listing stopped.`, {
    hint: 'The spec answers a page with an array of cards (4.5): check the base URL, or the service.',
  });
}

function repeatedPage(page: number, count: number, url: string): CardboardError {
  return new CardboardError(
    `Page ${page} of ${url} repeats ${count === 1 ? 'a card' : `${count} cards`} already seen on earlier pages; the listing stopped (the server's paging would never end).`,
    { hint: 'Check the service: pages end with an empty one (spec 4.5).' },
  );
}

function toCard(body: unknown, url: string): Card {
  if (!isObject(body) || typeof body._id !== 'string') throw unexpected('a card without a string `_id`', url);
  return body as Card;
}

/** The caller's query with `page` set to this page (a `page` it held is replaced). */
function withPage(query: URLSearchParams, page: number): URLSearchParams {
  const out = new URLSearchParams(query);
  out.set('page', String(page));
  return out;
}

/**
 * An Api over an existing client (the session builds them; tests build their own).
 * `token` keys the schema cache (only a tag of it is stored); without it the cache is neither read nor written.
 */
export function apiOver(http: Http, board: ResolvedBoard, ctx: ApiContext, token?: string): ApiClient {
  const boardPath = path`/api/aptlet/${board.id}`;
  const url = (p: string) => `${http.baseUrl}${p}`;
  const api: ApiClient = {
    board,
    http,
    pacer: http.pacer,
    async getSchema(opts = {}) {
      const p = `${boardPath}/schema`;
      return toFields(await http.get(p, undefined, opts), url(p));
    },
    async schema(opts = {}) {
      const nowMs = ctx.clock.now();
      if (!opts.refresh && token !== undefined) {
        const cached = readSchemaCache(ctx.env, http.baseUrl, board.id, token, nowMs);
        if (cached) return cached;
      }
      const fields = await api.getSchema({ signal: ctx.signal });
      const problem = token === undefined ? undefined : writeSchemaCache(ctx.env, http.baseUrl, board.id, token, fields, nowMs);
      // A cache that cannot be written costs a request next time, nothing more: said only with --verbose.
      if (problem && ctx.globals.verbose) notice(ctx, `[cache] ${problem}`, { always: true });
      return fields;
    },
    async putCard(body, opts = {}) {
      let answer: unknown;
      try {
        answer = await http.post(boardPath, body, opts);
      } catch (err) {
        throw namingBodySize(err, 'card');
      }
      if (isObject(answer) && typeof answer._id === 'string') return answer as Card;
      // A 2xx without a usable `_id` (a 204, `{"id": …}`, text) most likely stored the card: an outcome
      // the failure policy calls maybe-applied (no status, no known code), never a refusal or a bug.
      throw new ApiError(
        `The service answered POST ${url(boardPath)} with success but no card \`_id\`: the card may have been stored.`,
        { method: 'POST', url: url(boardPath), code: 'ENOCARDID' },
        { hint: 'The spec answers a POST with the card and its `_id`; check the base URL, or look for the card on the board.' },
      );
    },
    async getCard(id, opts = {}) {
      const p = path`/api/aptlet/${board.id}/card/${id}`;
      return toCard(await http.get(p, undefined, opts), url(p));
    },
    async listCards(page, opts = {}) {
      const listPath = opts.at?.path ?? boardPath;
      const body = await http.get(listPath, opts.at ? withPage(opts.at.query, page) : { page }, opts);
      if (!Array.isArray(body)) throw unexpected('a page that is not an array', url(listPath));
      // Every entry must be a card with an `_id` (spec 4.5): a null or a number would crash the first reader.
      for (let i = 0; i < body.length; i++) {
        const card: unknown = body[i];
        if (!isObject(card) || typeof card._id !== 'string') throw notACard(card, page, i, url(listPath));
      }
      return body as Card[];
    },
    async *cardPages(opts = {}) {
      // Spec 4.5: no total or next link; the end is the first empty page. Pages may shift while cards
      // change, so a page with some cards seen before is normal; one with only cards seen before is a
      // server repeating itself, and the listing would never end.
      // The caller may know which cards it has seen already (the --match-on index): no second set then.
      const own = opts.seen ? undefined : new SeenIds();
      const seenBefore = opts.seen;
      let pages = 0;
      let read = 0;
      for (let page = opts.startPage ?? 0; ; page++) {
        const cards = await api.listCards(page, { signal: opts.signal, maxTries: opts.maxTries, at: opts.at });
        if (cards.length === 0) return;
        let fresh = false;
        if (own) for (const card of cards) fresh = !own.add(card._id) || fresh;
        else fresh = cards.some((card) => !seenBefore!(card));
        if (!fresh) throw repeatedPage(page, cards.length, url(opts.at?.path ?? boardPath));
        pages++;
        read += cards.length;
        opts.onPage?.({ page, pages, cards: read });
        yield cards;
      }
    },
    async postComment(cardId, content, opts = {}) {
      const commentPath = path`/api/card/${cardId}/comment`;
      let body: unknown;
      try {
        body = await http.post(commentPath, { content }, opts);
      } catch (err) {
        throw namingBodySize(err, 'comment');
      }
      if (!isObject(body)) throw unexpected('a comment that is not an object', url(commentPath));
      return body as unknown as Comment;
    },
  };
  return api;
}
