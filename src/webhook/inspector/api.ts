// The inspector's list for the JSON API: the kept deliveries newest first, filtered by what their change
// touched (`changed=Field`) and by their card's fields (`where=EXPR`, the grammar of `card list --where`).
import { CardboardError } from '../../errors.js';
import { checkWhereSyntax, resolveWhere, whereFilter } from '../../schema/where.js';
import type { Card } from '../../spec-types.js';
import { cardIn } from '../changes.js';
import { HttpError } from './respond.js';
import type { EntryStore } from './store.js';

type EntryView = NonNullable<ReturnType<EntryStore['view']>>;

/** The parameters of GET api/deliveries; each may be given more than once, and all must hold. */
const PARAMS = new Set(['limit', 'changed', 'where']);

/** An error of the where grammar, which names the flag, as the API's parameter. */
function whereError(err: unknown): HttpError {
  if (!(err instanceof CardboardError)) throw err;
  const message = err.message.replace(/^--where /, 'where=');
  return new HttpError(400, err.hint ? `${message} (${err.hint})` : message);
}

/** Whether a delivery's card passes every expression: its fields are the keys of the card its body holds. */
function cardPasses(body: Buffer, exprs: readonly string[]): boolean {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    return false;
  }
  const card = cardIn(value);
  if (!card) return false;
  let terms;
  try {
    const resolved = resolveWhere(exprs, Object.keys(card));
    // An expression naming a field this card has not: the card does not match (another card may have it).
    if (resolved.unknown !== undefined) return false;
    terms = resolved.terms;
  } catch (err) {
    throw whereError(err);
  }
  return whereFilter(terms)(card as Card);
}

/** GET api/deliveries: {deliveries: [EntryView…] newest first, kept, dropped}; HttpError 400 for a parameter that is wrong. */
export function deliveryList(store: EntryStore, params: URLSearchParams): { deliveries: EntryView[]; kept: number; dropped: number } {
  for (const name of params.keys()) if (!PARAMS.has(name)) throw new HttpError(400, `unknown parameter ${JSON.stringify(name)}: use limit, changed or where`);
  const limits = params.getAll('limit');
  if (limits.length > 1) throw new HttpError(400, 'limit is given more than once');
  if (limits.length === 1 && !/^[1-9]\d{0,8}$/.test(limits[0]!)) throw new HttpError(400, `limit must be a whole number from 1: ${JSON.stringify(limits[0])}`);
  const limit = limits.length === 1 ? Number(limits[0]) : Infinity;
  const changed = params.getAll('changed');
  const wheres = params.getAll('where');
  for (const expr of wheres) {
    try {
      checkWhereSyntax(expr);
    } catch (err) {
      throw whereError(err);
    }
  }
  const all = [...store.views()];
  const out: EntryView[] = [];
  for (let i = all.length - 1; i >= 0 && out.length < limit; i--) {
    const view = all[i]!;
    if (!changed.every((field) => view.change.changes.some((c) => c.field === field))) continue;
    if (wheres.length > 0) {
      const found = store.lookup(view.seq);
      if (found.kind !== 'kept' || !cardPasses(found.delivery.body, wheres)) continue;
    }
    out.push(view);
  }
  return { deliveries: out, kept: store.size, dropped: store.dropped };
}
