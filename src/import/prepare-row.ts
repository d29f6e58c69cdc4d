// The checks every row goes through before it may be sent, shared by the run and --dry-run.
import { digestOf, type KeyIndex, keyText, lookupCard } from './match-index.js';
import { CellError, rowBody } from './mapping.js';
import { ownValue } from '../own-keys.js';
import type { ColumnMapping } from './types.js';

/** A row ready to send (with `_id` from --match-on when its key is on the board), or why it cannot be. */
export type Prepared =
  /**
   * `idFromIndex`: `_id` came from the --match-on index; `idOnBoard`: and the board held it when this run read
   * its pages (an index from a mirror may name a card deleted since it was last told).
   */
  | { kind: 'send'; body: Record<string, unknown>; key?: string; idFromIndex: boolean; idOnBoard?: boolean }
  | { kind: 'unchanged'; body: Record<string, unknown>; id: string }
  | { kind: 'reject'; message: string };

/** State across rows: the --match-on keys seen so far, for duplicate detection within the CSV. */
export interface PrepareState {
  columns: ColumnMapping[];
  sendEmpty: boolean;
  match?: KeyIndex;
  seenKeys: Map<string, number>;
  /** --force: send rows even when their values equal the card's. */
  force?: boolean;
}

/**
 * True when the row, as it would be sent, provably equals the card: it sends no field outside the digest,
 * and the digests match. A field the row omits (an empty cell) is digested as absent, so it matches only a
 * card that lacks the field too: posting the row would then change nothing. A card holding a value there
 * differs, and the row is sent (the post leaves that value as it is: harmless, never a skipped change).
 */
function provenUnchanged(index: KeyIndex, body: Readonly<Record<string, unknown>>, digest: string): boolean {
  if (Object.keys(body).some((k) => k !== '_id' && !index.fields.includes(k))) return false;
  return digestOf(body, index.fields) === digest;
}

/** Build the body and apply --match-on: empty, duplicate and ambiguous keys are rejected, never guessed. */
export function prepareRow(st: PrepareState, line: number, values: readonly unknown[]): Prepared {
  let body: Record<string, unknown>;
  try {
    body = rowBody(st.columns, values, st.sendEmpty);
  } catch (err) {
    if (err instanceof CellError) return { kind: 'reject', message: err.message };
    throw err;
  }
  if (Object.keys(body).every((k) => k === '_id')) return { kind: 'reject', message: 'no values to send' };
  if (!st.match) return { kind: 'send', body, idFromIndex: false };
  const field = st.match.field;
  const key = keyText(ownValue(body, field));
  if (key === undefined) return { kind: 'reject', message: `empty --match-on value (${field})` };
  const first = st.seenKeys.get(key);
  if (first !== undefined) return { kind: 'reject', message: `duplicate ${field} '${key}' (first on line ${first}); not sent` };
  st.seenKeys.set(key, line);
  const many = st.match.ambiguous.get(key);
  if (many) return { kind: 'reject', message: `${field} '${key}' matches ${many.count} cards (${many.ids.join(', ')}${many.count > many.ids.length ? ', …' : ''}); not sent` };
  const card = lookupCard(st.match, key);
  if (card === undefined) return { kind: 'send', body, key, idFromIndex: false };
  const { id } = card;
  if (body._id !== undefined && body._id !== id) {
    return { kind: 'reject', message: `_id ${body._id} disagrees with the card ${id} found by ${field} '${key}'` };
  }
  body._id = id;
  if (!st.force && provenUnchanged(st.match, body, card.digest)) return { kind: 'unchanged', body, id };
  return { kind: 'send', body, key, idFromIndex: true, idOnBoard: st.match.from.kind === 'pages' };
}
