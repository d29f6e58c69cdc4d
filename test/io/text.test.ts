import { describe, expect, it } from 'vitest';
import { tsvField, tsvRow, valueText } from '../../src/io/text.js';

describe('valueText', () => {
  it('keeps strings, empties null, JSON for the rest', () => {
    expect(valueText('x')).toBe('x');
    expect(valueText(null)).toBe('');
    expect(valueText(2.5)).toBe('2.5');
    expect(valueText({ a: 1 })).toBe('{"a":1}');
  });
});

describe('tsvField', () => {
  it('escapes tab, newline, CR and backslash so a record stays on one line', () => {
    expect(tsvField('a\tb\nc\rd\\e')).toBe('a\\tb\\nc\\rd\\\\e');
  });
  it('builds a tab-separated line', () => {
    expect(tsvRow(['Name', 3, null])).toBe('Name\t3\t\n');
  });
});
