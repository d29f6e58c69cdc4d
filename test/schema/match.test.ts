import { describe, expect, it } from 'vitest';
import { didYouMean, editDistance } from '../../src/did-you-mean.js';
import { checkKeys, describeUnknownKeys } from '../../src/schema/match.js';

const FIELDS = ['Name', 'Status', 'Owner', 'Priority', 'Due Date', 'Story points'];

describe('editDistance', () => {
  it('counts an adjacent swap as one edit', () => {
    expect(editDistance('stauts', 'status')).toBe(1);
    expect(editDistance('abc', 'abc')).toBe(0);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('kitten', 'sitting')).toBe(3);
  });
});

describe('didYouMean', () => {
  it('prefers a case-insensitive exact match', () => {
    expect(didYouMean('status', FIELDS)).toBe('Status');
    expect(didYouMean('STATUS', FIELDS)).toBe('Status');
  });
  it('matches after normalising whitespace, underscores and dashes', () => {
    expect(didYouMean('due_date', FIELDS)).toBe('Due Date');
    expect(didYouMean('DueDate', FIELDS)).toBe('Due Date');
    expect(didYouMean('story-points', FIELDS)).toBe('Story points');
  });
  it('suggests the nearest name within the threshold', () => {
    expect(didYouMean('Stauts', FIELDS)).toBe('Status');
    expect(didYouMean('Prority', FIELDS)).toBe('Priority');
    expect(didYouMean('Ownr', FIELDS)).toBe('Owner');
  });
  it('suggests nothing for a distant name', () => {
    expect(didYouMean('Colour', FIELDS)).toBeUndefined();
    expect(didYouMean('xy', ['ab'])).toBeUndefined();
    expect(didYouMean('anything', [])).toBeUndefined();
  });
  it('returns the exact name when it exists', () => {
    expect(didYouMean('Owner', FIELDS)).toBe('Owner');
  });
  it('prefers an exact case-insensitive match over a closer-looking fuzzy one', () => {
    expect(didYouMean('name', ['Names', 'NAME'])).toBe('NAME');
  });
});

describe('checkKeys', () => {
  it('returns unknown and mis-cased keys with suggestions, and accepts exact names and _id', () => {
    expect(checkKeys(['Name', '_id', 'status', 'Colour'], FIELDS)).toEqual([
      { key: 'status', suggestion: 'Status' },
      { key: 'Colour' },
    ]);
  });
  it('accepts Field objects as well as names', () => {
    expect(checkKeys(['name'], [{ name: 'Name', uuid: 'u1' }])).toEqual([{ key: 'name', suggestion: 'Name' }]);
    expect(checkKeys(['Name'], [{ name: 'Name', uuid: 'u1' }])).toEqual([]);
  });
  it('describes the unknown keys in one line', () => {
    expect(describeUnknownKeys([{ key: 'status', suggestion: 'Status' }])).toBe("unknown field 'status' (did you mean 'Status'?)");
    expect(describeUnknownKeys([{ key: 'a' }, { key: 'b' }])).toBe("unknown fields 'a', 'b'");
  });
});

describe('didYouMean: prefixes and abbreviations (only ever a proposal)', () => {
  const BOARD = ['Name', 'Priority', 'Description', 'Estimated hours', 'Status', 'State'];
  it('proposes the one field a column starts, case-insensitively', () => {
    expect(didYouMean('Prio', BOARD)).toBe('Priority');
    expect(didYouMean('prio', BOARD)).toBe('Priority');
    expect(didYouMean('desc', BOARD)).toBe('Description');
    expect(didYouMean('Desc', BOARD)).toBe('Description');
    expect(didYouMean('Est', BOARD)).toBe('Estimated hours');
  });
  it('proposes the one field whose words a column abbreviates', () => {
    expect(didYouMean('Est. hrs', BOARD)).toBe('Estimated hours');
    expect(didYouMean('est_hrs', BOARD)).toBe('Estimated hours');
    expect(didYouMean('EstHrs', BOARD)).toBe('Estimated hours');
    expect(didYouMean('Dscr', BOARD)).toBe('Description');
    expect(didYouMean('Prty', BOARD)).toBe('Priority');
  });
  it('proposes nothing when two fields fit equally', () => {
    expect(didYouMean('Prio', ['Priority', 'Prior art'])).toBeUndefined();
    expect(didYouMean('Dsc', ['Description', 'Discount'])).toBeUndefined();
    // Two names of the same letters are two fields: neither is proposed.
    expect(didYouMean('due', ['Due Date', 'due_date'])).toBeUndefined();
    // `Stat` starts both Status and State: no prefix proposal; the edit distance (1 to State) still speaks.
    expect(didYouMean('Stat', BOARD)).toBe('State');
    expect(didYouMean('Sta', ['Status', 'Stage'])).toBeUndefined();
  });
  it('needs two letters for a prefix and three for an abbreviation', () => {
    expect(didYouMean('P', ['Priority'])).toBeUndefined();
    expect(didYouMean('Pr', ['Priority'])).toBe('Priority');
    expect(didYouMean('P-y', ['Priority'])).toBeUndefined();
    expect(didYouMean('...', ['Priority'])).toBeUndefined();
  });
  it('treats toString, __proto__ and constructor as names, never as Object.prototype', () => {
    const odd = ['Name', 'toString', '__proto__', 'constructor'];
    expect(didYouMean('tostr', odd)).toBe('toString');
    expect(didYouMean('__pro', odd)).toBe('__proto__');
    expect(didYouMean('constr', odd)).toBe('constructor');
    for (const name of ['toString', '__proto__', 'constructor', 'hasOwnProperty', 'valueOf']) expect(didYouMean(name, ['Name', 'Priority'])).toBeUndefined();
    expect(checkKeys(['tostr'], odd)).toEqual([{ key: 'tostr', suggestion: 'toString' }]);
  });
  it('did-you-mean of a card key names the prefix match', () => {
    expect(describeUnknownKeys(checkKeys(['Prio'], BOARD))).toBe("unknown field 'Prio' (did you mean 'Priority'?)");
  });
});
