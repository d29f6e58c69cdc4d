import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { asNumber, checkWhereSyntax, parseWhere, resolveWhere, whereFilter, whereText } from '../../src/schema/where.js';
import type { Card } from '../../src/spec-types.js';

const FIELDS = ['Name', 'Status', 'Priority', 'Tags', 'Owner', 'Done?', 'a=b', 'x!', 'Size~', 'Cost<EUR>'];

/** The ids of the cards that pass every expression. */
function pick(cards: Card[], ...exprs: string[]): string[] {
  const keep = whereFilter(parseWhere(exprs, FIELDS));
  return cards.filter(keep).map((c) => c._id);
}

function usage(fn: () => unknown): UsageError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    expect((err as UsageError).exitCode).toBe(2);
    return err as UsageError;
  }
  throw new Error('expected a UsageError');
}

const CARDS: Card[] = [
  { _id: 'c1', Name: 'Fix login', Status: 'Open', Priority: 3, Tags: ['a', 'b'] },
  { _id: 'c2', Name: 'Write DOCS', Status: 'Done', Priority: '10' },
  { _id: 'c3', Name: 'Ship', Status: null, Priority: 'high', Owner: { name: 'Ada' } },
  { _id: 'c4', Name: 'Plan', Priority: 1.5, 'Done?': true },
];

describe('the --where operators', () => {
  it('= compares the text exactly, case included', () => {
    expect(pick(CARDS, 'Status=Open')).toEqual(['c1']);
    expect(pick(CARDS, 'Status=open')).toEqual([]);
  });

  it('!= is every card whose text differs, missing values included', () => {
    expect(pick(CARDS, 'Status!=Open')).toEqual(['c2', 'c3', 'c4']);
  });

  it('~ is contains, ignoring case', () => {
    expect(pick(CARDS, 'Name~docs')).toEqual(['c2']);
    expect(pick(CARDS, 'Name~I')).toEqual(['c1', 'c2', 'c3']);
  });

  it('< and > compare numbers; a number in a string counts, other values never match', () => {
    expect(pick(CARDS, 'Priority>2')).toEqual(['c1', 'c2']);
    expect(pick(CARDS, 'Priority<2')).toEqual(['c4']);
    // `high` and a missing value are neither above nor below anything.
    expect(pick(CARDS, 'Status<100')).toEqual([]);
    expect(pick(CARDS, 'Priority>-1e3')).toEqual(['c1', 'c2', 'c4']);
  });

  it('several expressions all hold (AND)', () => {
    expect(pick(CARDS, 'Priority>1', 'Name~i')).toEqual(['c1', 'c2']);
    expect(pick(CARDS, 'Priority>1', 'Status=Done')).toEqual(['c2']);
  });

  it('_id is a field', () => {
    expect(pick(CARDS, '_id=c3')).toEqual(['c3']);
  });
});

describe('the value of a card as the filter reads it', () => {
  it('is the string, the JSON text of a number, boolean, array or object, and "" for null or missing', () => {
    expect(whereText(CARDS[0]!, 'Priority')).toBe('3');
    expect(whereText(CARDS[0]!, 'Tags')).toBe('["a","b"]');
    expect(whereText(CARDS[2]!, 'Owner')).toBe('{"name":"Ada"}');
    expect(whereText(CARDS[3]!, 'Done?')).toBe('true');
    expect(whereText(CARDS[2]!, 'Status')).toBe('');
    expect(whereText(CARDS[3]!, 'Status')).toBe('');
    expect(whereText(CARDS[0]!, 'toString')).toBe('');
  });

  it('so Status= finds cards without a Status and Status!= those with one', () => {
    expect(pick(CARDS, 'Status=')).toEqual(['c3', 'c4']);
    expect(pick(CARDS, 'Status!=')).toEqual(['c1', 'c2']);
    expect(pick(CARDS, 'Priority=3')).toEqual(['c1']);
    expect(pick(CARDS, 'Done?=true')).toEqual(['c4']);
    expect(pick(CARDS, 'Tags~"b"')).toEqual(['c1']);
  });
});

describe('field names holding operator characters', () => {
  it('the field is the leftmost reading that names a field', () => {
    expect(parseWhere(['a=b=c'], FIELDS)[0]).toMatchObject({ field: 'a=b', op: '=', value: 'c' });
    expect(parseWhere(['x!=1'], FIELDS)[0]).toMatchObject({ field: 'x!', op: '=', value: '1' });
    expect(parseWhere(['x!!=1'], FIELDS)[0]).toMatchObject({ field: 'x!', op: '!=', value: '1' });
    expect(parseWhere(['Size~~m'], FIELDS)[0]).toMatchObject({ field: 'Size~', op: '~', value: 'm' });
    expect(parseWhere(['Cost<EUR><5'], FIELDS)[0]).toMatchObject({ field: 'Cost<EUR>', op: '<', number: 5 });
    expect(parseWhere(['Done?!=true'], FIELDS)[0]).toMatchObject({ field: 'Done?', op: '!=', value: 'true' });
  });

  it('an operator inside the value stays in the value', () => {
    expect(parseWhere(['Name=a<b=c'], FIELDS)[0]).toMatchObject({ field: 'Name', op: '=', value: 'a<b=c' });
    expect(parseWhere(['Name!=x~y'], FIELDS)[0]).toMatchObject({ field: 'Name', op: '!=', value: 'x~y' });
  });
});

describe('errors', () => {
  it('a wrong field name is exit 2 naming the --where and the closest field', () => {
    const err = usage(() => parseWhere(['Stauts=Open'], FIELDS));
    expect(err.message).toBe("--where 'Stauts=Open': unknown field 'Stauts' (did you mean 'Status'?); field names are case-sensitive");
    expect(err.hint).toContain('cardboard schema');
    expect(usage(() => parseWhere(['status!=Done'], FIELDS)).message).toContain("did you mean 'Status'?");
  });

  it('a name not found is reported, not thrown, by resolveWhere (so a fresh schema can be asked)', () => {
    expect(resolveWhere(['Name=x', 'Colour=red'], FIELDS)).toMatchObject({ unknown: 'Colour=red' });
  });

  it('no operator, an empty field, or < and > without a number: exit 2 naming the expression', () => {
    expect(usage(() => checkWhereSyntax('Status')).message).toBe("--where 'Status': it has no operator");
    expect(usage(() => checkWhereSyntax('=Open')).message).toBe("--where '=Open': the field name before the operator is empty");
    expect(usage(() => parseWhere(['!=Open'], FIELDS)).message).toBe("--where '!=Open': the field name before the operator is empty");
    expect(usage(() => parseWhere(['Priority<high'], FIELDS)).message).toBe(
      "--where 'Priority<high': < compares numbers, and it is followed by 'high', which is not a number",
    );
    expect(usage(() => parseWhere(['Priority>'], FIELDS)).message).toContain('followed by nothing');
    expect(usage(() => parseWhere(['Priority>=3'], FIELDS)).hint).toContain('Field<number');
  });
});

describe('asNumber', () => {
  it('reads decimal numbers only', () => {
    expect([' 3 ', '-2.5', '1e3', '.5', '+4.'].map(asNumber)).toEqual([3, -2.5, 1000, 0.5, 4]);
    expect(['', '0x10', 'Infinity', 'NaN', '1,000', '3 4'].map(asNumber)).toEqual(new Array(6).fill(undefined));
  });
});
