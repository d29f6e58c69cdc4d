import { describe, expect, it } from 'vitest';
import { notAnsweredText, notForwardedText, resumedForwardText, spoolKeptText } from '../../src/commands/webhook/render.js';
import { pagesText } from '../../src/io/progress.js';
import { omittedNote } from '../../src/io/table.js';
import { groupDigits, plural } from '../../src/io/text.js';
import { describeUnknownKeys } from '../../src/schema/match.js';

// Every counted phrase a person reads, at 0, 1 and 2: the noun agrees with its count (and so does the verb).
describe('plural: one helper for a count and its noun', () => {
  it('says 0 rows, 1 row, 2 rows, and takes an irregular plural', () => {
    expect([0, 1, 2].map((n) => plural(n, 'row'))).toEqual(['0 rows', '1 row', '2 rows']);
    expect([0, 1, 2].map((n) => plural(n, 'delivery', 'deliveries'))).toEqual(['0 deliveries', '1 delivery', '2 deliveries']);
    expect(plural(1_234_567, 'card')).toBe('1,234,567 cards');
    expect([0, 999, 1000, 20_000].map(groupDigits)).toEqual(['0', '999', '1,000', '20,000']);
  });

  it('webhook listen: deliveries resumed, left unforwarded in the record, kept in the spool', () => {
    expect([0, 1, 2].map(resumedForwardText)).toEqual([
      'Resuming: 0 recorded deliveries were never forwarded; sending them first.',
      'Resuming: 1 recorded delivery was never forwarded; sending it first.',
      'Resuming: 2 recorded deliveries were never forwarded; sending them first.',
    ]);
    expect([1, 2].map((n) => notForwardedText(n, 'r.jsonl', 'http://app'))).toEqual([
      '1 delivery already in r.jsonl is not forwarded; send it with `cardboard webhook replay r.jsonl --to http://app`.',
      '2 deliveries already in r.jsonl are not forwarded; send them with `cardboard webhook replay r.jsonl --to http://app`.',
    ]);
    expect([0, 1, 2].map((n) => spoolKeptText(n, 's.jsonl'))).toEqual([
      '0 deliveries were not forwarded; they are kept in s.jsonl. Resume with --record s.jsonl.',
      '1 delivery was not forwarded; it is kept in s.jsonl. Resume with --record s.jsonl.',
      '2 deliveries were not forwarded; they are kept in s.jsonl. Resume with --record s.jsonl.',
    ]);
  });

  it('webhook replay: failed answers out of the deliveries sent', () => {
    expect([notAnsweredText(1, 1), notAnsweredText(1, 2), notAnsweredText(2, 2)]).toEqual([
      '1 of 1 delivery was not answered 200',
      '1 of 2 deliveries was not answered 200',
      '2 of 2 deliveries were not answered 200',
    ]);
  });

  it('card list: pages and cards read, columns left out', () => {
    expect([0, 1, 2].map((n) => pagesText({ pages: n, cards: n }))).toEqual([
      'Reading the board: 0 pages, 0 cards',
      'Reading the board: 1 page, 1 card',
      'Reading the board: 2 pages, 2 cards',
    ]);
    expect(omittedNote(['A'])).toBe('1 column not shown to fit the terminal (A): widen the terminal to see them');
    expect(omittedNote(['A', 'B'])).toBe('2 columns not shown to fit the terminal (A, B): widen the terminal to see them');
  });

  it('unknown fields: one or more, and how many more', () => {
    expect(describeUnknownKeys([{ key: 'a' }])).toBe("unknown field 'a'");
    expect(describeUnknownKeys([{ key: 'a' }, { key: 'b' }])).toBe("unknown fields 'a', 'b'");
  });
});
