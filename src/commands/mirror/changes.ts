// A change a pull made to the mirror, shown as `webhook listen` shows a delivery's change: the same words on a
// line (`card X  Status: Open → Done`), the same keys in JSON (`change`, `cardId`, `changes`), so one reader
// of listen's output reads `mirror pull --every` too.
import { isDeepStrictEqual } from 'node:util';
import type { MirrorChange } from '../../mirror/types.js';
import type { DeliveryChange } from '../../webhook/changes.js';
import { cardChangeText, changeJson } from '../webhook/render.js';

type FieldChange = DeliveryChange['changes'][number];

/**
 * The change as listen's reading of a delivery: a card new to the mirror lists its fields, a changed one the
 * fields whose value differs (a field the page no longer holds: `after` absent), a deleted one none. Unlike
 * a delivery, a page holds the whole card, so a field missing from it was cleared, not left unsent.
 */
export function deliveryChange(change: MirrorChange): DeliveryChange {
  const { id, before, after } = change;
  if (after === undefined) return { event: 'deleted', cardId: id, changes: [] };
  const changes: FieldChange[] = [];
  for (const field of Object.keys(after)) {
    if (field === '_id') continue;
    const was = before !== undefined && Object.hasOwn(before, field) ? before[field] : undefined;
    if (before === undefined || !Object.hasOwn(before, field)) changes.push({ field, after: after[field] });
    else if (!isDeepStrictEqual(was, after[field])) changes.push({ field, before: was, after: after[field] });
  }
  if (before !== undefined) for (const field of Object.keys(before)) if (field !== '_id' && !Object.hasOwn(after, field)) changes.push({ field, before: before[field] });
  if (before === undefined) return { event: 'new', cardId: id, changes };
  return { event: changes.length > 0 ? 'changed' : 'unchanged', cardId: id, changes };
}

/** A change's line on a terminal: the time it was found, then what listen says of a delivery's card. */
export function changeLine(change: DeliveryChange, at: string): string {
  return `${at.slice(11, 23)}  ${cardChangeText(change)}`;
}

/** A change as one JSON line: when it was found and by which pull, then listen's change keys. */
export function changeJsonLine(change: DeliveryChange, at: string, pull: number): string {
  return JSON.stringify({ at, pull, ...changeJson(change) });
}
