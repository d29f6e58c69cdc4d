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
