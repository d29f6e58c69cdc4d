// A name written short for another (a column or key for a field name, a word for a command): the start of
// it (`Prio` for `Priority`) or an abbreviation of its words (`Desc` for `Description`, `Est. hrs` for
// `Estimated hours`). These only ever propose a name (did-you-mean, the mapping prompt's default); nothing is
// mapped by them. A proposal is made only when one name answers: two that fit equally well (`Stat` for
// `Status` and `State`) propose neither.

/** Lower-case letters and digits only: `Est. hrs` → `esthrs`, `__proto__` → `proto`. */
function lettersOf(name: string): string {
  return name.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');
}

/** The words of a name, lower case: split at anything not a letter or digit and where camelCase turns upper. */
function wordsOf(name: string): string[] {
  return name
    .replace(/(\p{Ll})(\p{Lu})/gu, '$1 $2')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w !== '');
}

/** Whether `short` is `word` with letters left out: its first letter, then the rest in order. */
function abbreviates(short: string, word: string): boolean {
  if (short[0] !== word[0]) return false;
  let at = 1;
  for (let i = 1; i < short.length; i++) {
    at = word.indexOf(short[i]!, at) + 1;
    if (at === 0) return false;
  }
  return true;
}

/**
 * Whether the words of a short name abbreviate the words of a full one, in order: the first word the full
 * one's first, each next one a later word (`Est hrs` fits `Estimated work hours`).
 */
function abbreviatesWords(short: readonly string[], full: readonly string[]): boolean {
  if (short.length === 0 || full.length === 0 || !abbreviates(short[0]!, full[0]!)) return false;
  let at = 1;
  for (let i = 1; i < short.length; i++) {
    while (at < full.length && !abbreviates(short[i]!, full[at]!)) at++;
    if (at === full.length) return false;
    at++;
  }
  return true;
}

/** The fewest letters a prefix needs to propose a name, and an abbreviation (shorter ones fit too much). */
const MIN_PREFIX = 2;
const MIN_ABBREVIATION = 3;

interface Entry {
  letters: string;
  name: string;
}

/** Index of the first entry whose letters are not below `key` (entries sorted by letters). */
function lowerBound(entries: readonly Entry[], key: string): number {
  let lo = 0;
  let hi = entries.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (entries[mid]!.letters < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The one name in `found`, or undefined when there are none or several. */
function only(found: Set<string>): string | undefined {
  return found.size === 1 ? [...found][0] : undefined;
}

/**
 * Lookups of a set of names (a schema's field names) by shorthand, built once for many lookups. `maxWork`
 * bounds the letters one abbreviation lookup compares (a hostile schema of look-alike names); past it, no proposal.
 */
export function shorthandIndex(names: readonly string[], maxWork: number) {
  const entries: Entry[] = names.map((name) => ({ letters: lettersOf(name), name })).filter((e) => e.letters !== '');
  entries.sort((a, b) => (a.letters < b.letters ? -1 : a.letters > b.letters ? 1 : 0));
  return {
    /** The name whose letters alone start with the short name's (`Prio` → `Priority`, `desc` → `Description`). */
    prefix(name: string): string | undefined {
      const key = lettersOf(name);
      if (key.length < MIN_PREFIX) return undefined;
      const found = new Set<string>();
      for (let i = lowerBound(entries, key); i < entries.length && entries[i]!.letters.startsWith(key) && found.size < 2; i++) found.add(entries[i]!.name);
      return only(found);
    },
    /** The name alone whose words the short name's words abbreviate (`Desc` → `Description`, `Est. hrs` → `Estimated hours`). */
    abbreviation(name: string): string | undefined {
      const short = wordsOf(name);
      if (short.join('').length < MIN_ABBREVIATION) return undefined;
      const first = short[0]![0]!;
      const found = new Set<string>();
      let work = 0;
      // Only names whose letters start with the short name's first letter can fit (the first words must).
      for (let i = lowerBound(entries, first); i < entries.length && entries[i]!.letters.startsWith(first) && found.size < 2; i++) {
        work += entries[i]!.name.length;
        if (work > maxWork) return undefined;
        if (abbreviatesWords(short, wordsOf(entries[i]!.name))) found.add(entries[i]!.name);
      }
      return only(found);
    },
  };
}
