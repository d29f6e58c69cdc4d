import { terminalText } from '../io/text.js';
import type { Field } from '../spec-types.js';

/** A key that is not a field name of the board, with the nearest field name when one is close. */
export interface UnknownKey {
  key: string;
  suggestion?: string;
}

/** Lower case without whitespace, underscores or dashes: `due_date`, `Due-Date` and `due date` compare equal. */
function normalise(name: string): string {
  return name.toLowerCase().replace(/[\s_-]+/g, '');
}

/** Optimal-string-alignment Damerau-Levenshtein distance: edits plus adjacent swaps (`Stauts` → `Status` is 1). */
export function editDistance(a: string, b: string): number {
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) rows.push([i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 0; j <= b.length; j++) rows[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = d;
    }
  }
  return rows[a.length]![b.length]!;
}

/**
 * The field the user most likely meant by `name`, or undefined when none is close.
 * Order: exact, case-insensitive exact, equal after normalising whitespace/`_`/`-`, then the smallest
 * edit distance within a third of the longer name (at least 1), ties going to the earlier field.
 */
export function suggestField(name: string, fieldNames: string[]): string | undefined {
  if (fieldNames.includes(name)) return name;
  const lower = name.toLowerCase();
  const caseMatch = fieldNames.find((f) => f.toLowerCase() === lower);
  if (caseMatch !== undefined) return caseMatch;
  const norm = normalise(name);
  const normMatch = fieldNames.find((f) => normalise(f) === norm);
  if (normMatch !== undefined) return normMatch;
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const field of fieldNames) {
    const other = normalise(field);
    const threshold = Math.max(1, Math.floor(Math.max(norm.length, other.length) / 3));
    const distance = editDistance(norm, other);
    if (distance <= threshold && distance < bestDistance) {
      best = field;
      bestDistance = distance;
    }
  }
  return best;
}

/**
 * The keys that are not field names of the board, compared exactly, case included (spec 2.2: `status`
 * does not map to `Status`; spec 4.3: the server would drop it silently). `_id` is always allowed (spec 4.3).
 */
export function checkKeys(keys: Iterable<string>, fields: readonly (Field | string)[]): UnknownKey[] {
  const names = fields.map((f) => (typeof f === 'string' ? f : f.name));
  const known = new Set(names);
  const unknown: UnknownKey[] = [];
  for (const key of keys) {
    if (key === '_id' || known.has(key)) continue;
    const suggestion = suggestField(key, names);
    unknown.push(suggestion === undefined ? { key } : { key, suggestion });
  }
  return unknown;
}

/** One line naming each unknown key and its suggestion: `unknown field 'status' (did you mean 'Status'?)`. */
export function describeUnknownKeys(unknown: readonly UnknownKey[]): string {
  // terminalText: a field name holding a line break must not start a line of the error of its own.
  const parts = unknown.map((u) => (u.suggestion ? `'${terminalText(u.key)}' (did you mean '${terminalText(u.suggestion)}'?)` : `'${terminalText(u.key)}'`));
  return `unknown field${unknown.length === 1 ? '' : 's'} ${parts.join(', ')}`;
}
