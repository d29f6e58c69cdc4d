import { groupDigits, terminalText } from '../io/text.js';
import type { Field } from '../spec-types.js';
import { shorthandIndex } from './shorthand.js';

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

/** Counts the work of a suggester (tests prove with it that the search is bounded). */
export interface SuggestStats {
  /** Edit distances computed. */
  comparisons: number;
  /** Their cost: the cells of each band, counted before it is computed. */
  cells: number;
}

/**
 * The most edit-distance cells one suggestion computes, a band of `name length x (2 x limit + 1)` counted
 * per candidate. A schema of 200,000 ordinary names fits (about 80 cells each); a hostile one of huge or
 * look-alike names stops here, closest lengths first, instead of taking minutes.
 */
export const MAX_CELLS = 20_000_000;

interface Candidate {
  name: string;
  norm: string;
  index: number;
}

/**
 * The OSA distance of `a` and `b` when it is at most `k`, else k + 1: only the diagonal band |i - j| <= k
 * is computed, and a row whose every cell exceeds k ends the search. `rows` are three reused buffers.
 */
function boundedDistance(a: string, b: string, k: number, rows: Int32Array[]): number {
  const n = a.length;
  const m = b.length;
  const big = k + 1;
  if (Math.abs(n - m) > k) return big;
  if (n === 0 || m === 0) return Math.max(n, m);
  let [prev2, prev, cur] = rows as [Int32Array, Int32Array, Int32Array];
  for (let j = 0; j <= m; j++) prev[j] = j <= k ? j : big;
  for (let i = 1; i <= n; i++) {
    const lo = Math.max(1, i - k);
    const hi = Math.min(m, i + k);
    cur[0] = i <= k ? i : big;
    if (lo > 1) cur[lo - 1] = big;
    let rowMin = cur[0];
    const ai = a.charCodeAt(i - 1);
    for (let j = lo; j <= hi; j++) {
      const bj = b.charCodeAt(j - 1);
      let d = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (ai === bj ? 0 : 1));
      if (i > 1 && j > 1 && ai === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === bj) d = Math.min(d, prev2[j - 2]! + 1);
      cur[j] = d > big ? big : d;
      if (d < rowMin) rowMin = d;
    }
    if (hi < m) cur[hi + 1] = big;
    if (rowMin > k) return big;
    [prev2, prev, cur] = [prev, cur, prev2];
  }
  return Math.min(prev[m]!, big);
}

/**
 * A suggester over one schema's field names, for many names: built once (maps and length buckets), each
 * lookup is a map hit or a bounded search. Same answers as the rules of suggestField.
 */
export function fieldSuggester(fieldNames: readonly string[], stats?: SuggestStats): (name: string) => string | undefined {
  const exact = new Set(fieldNames);
  const byLower = new Map<string, string>();
  const byNorm = new Map<string, string>();
  const byLength = new Map<number, Candidate[]>();
  let longest = 0;
  fieldNames.forEach((name, index) => {
    const lower = name.toLowerCase();
    if (!byLower.has(lower)) byLower.set(lower, name);
    const norm = normalise(name);
    if (!byNorm.has(norm)) byNorm.set(norm, name);
    const bucket = byLength.get(norm.length);
    if (bucket) bucket.push({ name, norm, index });
    else byLength.set(norm.length, [{ name, norm, index }]);
    longest = Math.max(longest, norm.length);
  });
  const lengths = [...byLength.keys()];
  const rows = [0, 1, 2].map(() => new Int32Array(longest + 1));
  // Sorted on first use: a schema whose every name is found exactly never pays for it.
  let short: ReturnType<typeof shorthandIndex> | undefined;
  return (name) => {
    if (exact.has(name)) return name;
    const found = byLower.get(name.toLowerCase()) ?? byNorm.get(normalise(name));
    if (found !== undefined) return found;
    short ??= shorthandIndex(fieldNames, MAX_CELLS);
    const start = short.prefix(name);
    if (start !== undefined) return start;
    const close = closest(name);
    return close ?? short.abbreviation(name);
  };

  /** The field within the edit-distance threshold of `name` (suggestField's last but one rule). */
  function closest(name: string): string | undefined {
    const norm = normalise(name);
    const len = norm.length;
    let best: Candidate | undefined;
    let bestDistance = Number.POSITIVE_INFINITY;
    let budget = MAX_CELLS;
    // Closest lengths first: the length difference is a lower bound of the distance.
    for (const other of [...lengths].sort((x, y) => Math.abs(x - len) - Math.abs(y - len) || x - y)) {
      const gap = Math.abs(other - len);
      if (gap > bestDistance) break;
      const threshold = Math.max(1, Math.floor(Math.max(len, other) / 3));
      if (gap > threshold) continue;
      for (const c of byLength.get(other)!) {
        // A later field must be strictly closer to win; an earlier one wins a tie (field order decides).
        const limit = Math.min(threshold, best === undefined || c.index < best.index ? bestDistance : bestDistance - 1);
        if (gap > limit) continue;
        const cells = len * (2 * limit + 1);
        budget -= cells;
        if (budget < 0) return best?.name;
        if (stats) {
          stats.comparisons++;
          stats.cells += cells;
        }
        const d = boundedDistance(norm, c.norm, limit, rows);
        if (d <= limit) {
          best = c;
          bestDistance = d;
        }
      }
    }
    return best?.name;
  }
}

/**
 * The field the user most likely meant by `name`, or undefined when none is close.
 * Order: exact, case-insensitive exact, equal after normalising whitespace/`_`/`-`, the one field whose
 * letters start with the name's (`Prio` → `Priority`; none when two do), then the smallest edit distance
 * within a third of the longer name (at least 1), ties going to the earlier field, and last the one field
 * whose words the name's words abbreviate (`Desc`, `Est. hrs` → `Estimated hours`; none when two fit).
 * For many names against one schema, build a fieldSuggester once.
 */
export function suggestField(name: string, fieldNames: readonly string[]): string | undefined {
  return fieldSuggester(fieldNames)(name);
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
    suggest ??= fieldSuggester(names);
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
