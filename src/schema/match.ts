import { suggesterFor } from '../did-you-mean.js';
import { groupDigits, terminalText } from '../io/text.js';
import type { Field } from '../spec-types.js';

/** A key that is not a field name of the board, with the nearest field name when one is close. */
export interface UnknownKey {
  key: string;
  suggestion?: string;
}

/**
 * The keys that are not field names of the board, compared exactly, case included (spec 2.2: `status`
 * does not map to `Status`; spec 4.3: the server would drop it silently). `_id` is always allowed (spec 4.3).
 */
export function checkKeys(keys: Iterable<string>, fields: readonly (Field | string)[]): UnknownKey[] {
  const names = fields.map((f) => (typeof f === 'string' ? f : f.name));
  const known = new Set(names);
  const unknown: UnknownKey[] = [];
  let suggest: ((name: string) => string | undefined) | undefined;
  for (const key of keys) {
    if (key === '_id' || known.has(key)) continue;
    suggest ??= suggesterFor(names);
    const suggestion = suggest(key);
    unknown.push(suggestion === undefined ? { key } : { key, suggestion });
  }
  return unknown;
}

/** How many unknown keys one message names; the rest are counted. */
const UNKNOWN_KEYS_SHOWN = 10;

/**
 * One line naming each unknown key and its suggestion: `unknown field 'status' (did you mean 'Status'?)`;
 * past UNKNOWN_KEYS_SHOWN keys the first ones and `and N more`, so a huge body makes a short message.
 */
export function describeUnknownKeys(unknown: readonly UnknownKey[]): string {
  // terminalText: a field name holding a line break must not start a line of the error of its own.
  const shown = unknown.slice(0, UNKNOWN_KEYS_SHOWN);
  const parts = shown.map((u) => (u.suggestion ? `'${terminalText(u.key)}' (did you mean '${terminalText(u.suggestion)}'?)` : `'${terminalText(u.key)}'`));
  const more = unknown.length - shown.length;
  return `unknown field${unknown.length === 1 ? '' : 's'} ${parts.join(', ')}${more > 0 ? ` and ${groupDigits(more)} more` : ''}`;
}
