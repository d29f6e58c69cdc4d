// The checks every row goes through before it may be sent, shared by the run and --dry-run.
import type { KeyIndex } from './match-index.js';
import { rowBody } from './mapping.js';
import type { ColumnMapping } from './types.js';

/** A row ready to send (with `_id` from --match-on when its key is on the board), or why it cannot be. */
export type Prepared =
  | { kind: 'send'; body: Record<string, string>; key?: string; idFromIndex: boolean }
  | { kind: 'reject'; message: string };

/** State across rows: the --match-on keys seen so far, for duplicate detection within the CSV. */
export interface PrepareState {
  columns: ColumnMapping[];
  sendEmpty: boolean;
  match?: KeyIndex;
  seenKeys: Map<string, number>;
}

/** Build the body and apply --match-on: empty, duplicate and ambiguous keys are rejected, never guessed. */
export function prepareRow(st: PrepareState, line: number, values: string[]): Prepared {
  const body = rowBody(st.columns, values, st.sendEmpty);
  if (Object.keys(body).every((k) => k === '_id')) return { kind: 'reject', message: 'no values to send' };
  if (!st.match) return { kind: 'send', body, idFromIndex: false };
  const field = st.match.field;
  const key = body[field];
  if (key === undefined || key === '') return { kind: 'reject', message: `empty --match-on value (${field})` };
  const first = st.seenKeys.get(key);
  if (first !== undefined) return { kind: 'reject', message: `duplicate ${field} '${key}' (first on line ${first}); not sent` };
  st.seenKeys.set(key, line);
  const many = st.match.ambiguous.get(key);
  if (many) return { kind: 'reject', message: `${field} '${key}' matches ${many.length} cards (${many.join(', ')}); not sent` };
  const id = st.match.ids.get(key);
  if (id === undefined) return { kind: 'send', body, key, idFromIndex: false };
  if (body._id !== undefined && body._id !== id) {
    return { kind: 'reject', message: `_id ${body._id} disagrees with the card ${id} found by ${field} '${key}'` };
  }
  body._id = id;
  return { kind: 'send', body, key, idFromIndex: true };
}
