import fc from 'fast-check';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { csvField, csvRow } from '../../src/io/csv.js';

describe('csvField', () => {
  it('leaves plain text unquoted', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('')).toBe('');
  });
  it('quotes commas, quotes, CR and LF, doubling inner quotes (RFC 4180)', () => {
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField('cr\r')).toBe('"cr\r"');
  });
  it('quotes leading or trailing spaces', () => {
    expect(csvField(' padded ')).toBe('" padded "');
  });
  it('writes null/undefined empty and other values as JSON', () => {
    expect(csvField(null)).toBe('');
    expect(csvField(undefined)).toBe('');
    expect(csvField(3)).toBe('3');
    expect(csvField(true)).toBe('true');
    expect(csvField(['a', 'b'])).toBe('"[""a"",""b""]"');
  });
});

describe('csvRow', () => {
  it('joins with commas and ends with CRLF', () => {
    expect(csvRow(['_id', 'Name', 'Due Date'])).toBe('_id,Name,Due Date\r\n');
  });
  it('round-trips any strings through csv-parse', () => {
    fc.assert(
      fc.property(fc.array(fc.array(fc.string(), { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 5 }), (rows) => {
        const width = rows[0]!.length;
        const table = rows.map((r) => Array.from({ length: width }, (_, i) => r[i] ?? ''));
        const text = table.map(csvRow).join('');
        expect(parse(text, { relax_column_count: false })).toEqual(table);
      }),
    );
  });
});
