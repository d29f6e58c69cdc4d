import { describe, expect, it } from 'vitest';
import { checkKeys, describeUnknownKeys, editDistance, suggestField } from '../../src/schema/match.js';

const FIELDS = ['Name', 'Status', 'Owner', 'Priority', 'Due Date', 'Story points'];

describe('editDistance', () => {
  it('counts an adjacent swap as one edit', () => {
    expect(editDistance('stauts', 'status')).toBe(1);
    expect(editDistance('abc', 'abc')).toBe(0);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('kitten', 'sitting')).toBe(3);
  });
});

describe('suggestField', () => {
  it('prefers a case-insensitive exact match', () => {
    expect(suggestField('status', FIELDS)).toBe('Status');
    expect(suggestField('STATUS', FIELDS)).toBe('Status');
  });
  it('matches after normalising whitespace, underscores and dashes', () => {
    expect(suggestField('due_date', FIELDS)).toBe('Due Date');
    expect(suggestField('DueDate', FIELDS)).toBe('Due Date');
    expect(suggestField('story-points', FIELDS)).toBe('Story points');
  });
  it('suggests the nearest name within the threshold', () => {
    expect(suggestField('Stauts', FIELDS)).toBe('Status');
    expect(suggestField('Prority', FIELDS)).toBe('Priority');
    expect(suggestField('Ownr', FIELDS)).toBe('Owner');
  });
  it('suggests nothing for a distant name', () => {
    expect(suggestField('Colour', FIELDS)).toBeUndefined();
    expect(suggestField('xy', ['ab'])).toBeUndefined();
    expect(suggestField('anything', [])).toBeUndefined();
  });
  it('returns the exact name when it exists', () => {
    expect(suggestField('Owner', FIELDS)).toBe('Owner');
  });
  it('prefers an exact case-insensitive match over a closer-looking fuzzy one', () => {
    expect(suggestField('name', ['Names', 'NAME'])).toBe('NAME');
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

describe('suggestField: prefixes and abbreviations (only ever a proposal)', () => {
  const BOARD = ['Name', 'Priority', 'Description', 'Estimated hours', 'Status', 'State'];
  it('proposes the one field a column starts, case-insensitively', () => {
    expect(suggestField('Prio', BOARD)).toBe('Priority');
    expect(suggestField('prio', BOARD)).toBe('Priority');
    expect(suggestField('desc', BOARD)).toBe('Description');
    expect(suggestField('Desc', BOARD)).toBe('Description');
    expect(suggestField('Est', BOARD)).toBe('Estimated hours');
  });
  it('proposes the one field whose words a column abbreviates', () => {
    expect(suggestField('Est. hrs', BOARD)).toBe('Estimated hours');
    expect(suggestField('est_hrs', BOARD)).toBe('Estimated hours');
    expect(suggestField('EstHrs', BOARD)).toBe('Estimated hours');
    expect(suggestField('Dscr', BOARD)).toBe('Description');
    expect(suggestField('Prty', BOARD)).toBe('Priority');
  });
  it('proposes nothing when two fields fit equally', () => {
    expect(suggestField('Prio', ['Priority', 'Prior art'])).toBeUndefined();
    expect(suggestField('Dsc', ['Description', 'Discount'])).toBeUndefined();
    // Two names of the same letters are two fields: neither is proposed.
    expect(suggestField('due', ['Due Date', 'due_date'])).toBeUndefined();
    // `Stat` starts both Status and State: no prefix proposal; the edit distance (1 to State) still speaks.
    expect(suggestField('Stat', BOARD)).toBe('State');
    expect(suggestField('Sta', ['Status', 'Stage'])).toBeUndefined();
  });
  it('needs two letters for a prefix and three for an abbreviation', () => {
    expect(suggestField('P', ['Priority'])).toBeUndefined();
    expect(suggestField('Pr', ['Priority'])).toBe('Priority');
    expect(suggestField('P-y', ['Priority'])).toBeUndefined();
    expect(suggestField('...', ['Priority'])).toBeUndefined();
  });
  it('treats toString, __proto__ and constructor as names, never as Object.prototype', () => {
    const odd = ['Name', 'toString', '__proto__', 'constructor'];
    expect(suggestField('tostr', odd)).toBe('toString');
    expect(suggestField('__pro', odd)).toBe('__proto__');
    expect(suggestField('constr', odd)).toBe('constructor');
    for (const name of ['toString', '__proto__', 'constructor', 'hasOwnProperty', 'valueOf']) expect(suggestField(name, ['Name', 'Priority'])).toBeUndefined();
    expect(checkKeys(['tostr'], odd)).toEqual([{ key: 'tostr', suggestion: 'toString' }]);
  });
  it('did-you-mean of a card key names the prefix match', () => {
    expect(describeUnknownKeys(checkKeys(['Prio'], BOARD))).toBe("unknown field 'Prio' (did you mean 'Priority'?)");
  });
});
