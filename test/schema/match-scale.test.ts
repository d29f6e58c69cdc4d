// Did-you-mean against a huge schema was quadratic (20 unknown headers x 200,000 fields
// took 10.4 s). The suggester indexes the schema once, and bounds the edit-distance work of each lookup.
// No timing here: the same answers as the plain search, and the work counted.
import { describe, expect, it } from 'vitest';
import { didYouMean, editDistance, MAX_CELLS, type SuggestStats, suggesterFor } from '../../src/did-you-mean.js';

/** The search as it was (every field, full edit distance): the reference for the answers. */
function reference(name: string, fieldNames: string[]): string | undefined {
  const normalise = (s: string) => s.toLowerCase().replace(/[\s_-]+/g, '');
  if (fieldNames.includes(name)) return name;
  const caseMatch = fieldNames.find((f) => f.toLowerCase() === name.toLowerCase());
  if (caseMatch !== undefined) return caseMatch;
  const norm = normalise(name);
  const normMatch = fieldNames.find((f) => normalise(f) === norm);
  if (normMatch !== undefined) return normMatch;
  // The one field whose letters start with the name's (2 letters at least), by plain search.
  const letters = (s: string) => s.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');
  const key = letters(name);
  const starts = new Set(fieldNames.filter((f) => key.length >= 2 && letters(f) !== '' && letters(f).startsWith(key)));
  if (starts.size === 1) return [...starts][0];
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
  if (best !== undefined) return best;
  // The one field whose words the name's words abbreviate, by a regular expression per word.
  const words = (s: string) => s.replace(/(\p{Ll})(\p{Lu})/gu, '$1 $2').toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((w) => w !== '');
  const short = words(name);
  if (short.join('').length < 3) return undefined;
  const pattern = new RegExp(`^${short.map((w) => [...w].join('[^ ]*')).join('[^ ]*(?: [^ ]*)* ')}`, 'u');
  const fits = new Set(fieldNames.filter((f) => pattern.test(words(f).join(' '))));
  return fits.size === 1 ? [...fits][0] : undefined;
}

function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a * 1103515245 + 12345) >>> 0;
    return a / 2 ** 32;
  };
}

function typo(word: string, rnd: () => number): string {
  const i = Math.floor(rnd() * word.length);
  const c = String.fromCharCode(97 + Math.floor(rnd() * 26));
  switch (Math.floor(rnd() * 5)) {
    case 0:
      return word.slice(0, i) + word.slice(i + 1);
    case 1:
      return word.slice(0, i) + c + word.slice(i);
    case 2:
      return word.slice(0, i) + c + word.slice(i + 1);
    case 3:
      return i + 1 < word.length ? word.slice(0, i) + word[i + 1] + word[i] + word.slice(i + 2) : word.toUpperCase();
    default:
      return word.replace(/ /g, '_');
  }
}

describe('suggesterFor', () => {
  it('gives the same answers as the plain search (random schema, typos, ties, distant names)', () => {
    const rnd = prng(11);
    const word = (n: number) => Array.from({ length: n }, () => String.fromCharCode(97 + Math.floor(rnd() * 6))).join('');
    // A small alphabet: many near and tied candidates, so the order of the search matters.
    const fields = Array.from({ length: 800 }, (_, i) => (i % 3 === 0 ? `${word(3)} ${word(1 + (i % 7))}` : word(1 + (i % 12))));
    const names = [...Array.from({ length: 200 }, () => typo(fields[Math.floor(rnd() * fields.length)]!, rnd)), ...Array.from({ length: 60 }, () => word(1 + Math.floor(rnd() * 14)))];
    const suggest = suggesterFor(fields);
    for (const name of names) expect([name, suggest(name)]).toEqual([name, reference(name, fields)]);
  });

  it('finds the right field among 200,000 while comparing only names of a close length', () => {
    const fields = Array.from({ length: 200_000 }, (_, i) => `Field ${String(i).padStart(6, '0')}`);
    fields.push('Status', 'Owner');
    const stats: SuggestStats = { comparisons: 0, cells: 0 };
    const suggest = suggesterFor(fields, stats);
    expect(suggest('Fild 199998')).toBe('Field 199998');
    expect(suggest('field_123456')).toBe('Field 123456');
    expect(suggest('Stauts')).toBe('Status');
    expect(suggest('Ownr')).toBe('Owner');
    // 'Stauts' and 'Ownr' are compared with the short names only, never with the 200,000 long ones.
    const before = stats.comparisons;
    suggest('Ownr');
    expect(stats.comparisons - before).toBeLessThanOrEqual(2);
    // An exact or case-insensitive name costs no comparison at all.
    suggest('field 000001');
    expect(stats.comparisons - before).toBeLessThanOrEqual(2);
  });

  it('bounds the work of one lookup against a hostile schema of long look-alike names', () => {
    const rnd = prng(5);
    // Random strings over two letters: every pair is within a third of its length, so nothing prunes.
    const ab = (n: number) => Array.from({ length: n }, () => (rnd() < 0.5 ? 'a' : 'b')).join('');
    const fields = Array.from({ length: 5_000 }, () => ab(300));
    const stats: SuggestStats = { comparisons: 0, cells: 0 };
    const suggest = suggesterFor(fields, stats);
    expect(suggest(ab(300))).toMatch(/^[ab]{300}$/);
    expect(stats.cells).toBeLessThanOrEqual(MAX_CELLS);
    expect(stats.comparisons).toBeLessThan(fields.length / 10);
  });

  it('didYouMean keeps its answers for a normal schema', () => {
    expect(didYouMean('Stauts', ['Name', 'Status', 'Stats'])).toBe('Status');
    expect(didYouMean('Stat', ['Stats', 'Statu'])).toBe('Stats');
  });
});
