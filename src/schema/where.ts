// The `--where` filter of cards: `Field=value`, `Field!=value`, `Field~text`, `Field<n`, `Field>n`. One grammar
// and one evaluator for every reader of cards (a live listing, the mirror, a listener), so each gives the same
// cards for the same expression by construction.
import type { Api } from '../api/types.js';
import { UsageError } from '../errors.js';
import { terminalText } from '../io/text.js';
import type { Card, Field } from '../spec-types.js';
import { checkKeys, describeUnknownKeys } from './match.js';

/** The comparisons of the grammar. */
export type WhereOp = '=' | '!=' | '~' | '<' | '>';

/** One parsed expression: the field (an exact field name of the board, or `_id`), the comparison and its operand. */
export interface WhereTerm {
  /** The expression as the user wrote it (errors name it). */
  expr: string;
  field: string;
  op: WhereOp;
  value: string;
  /** The operand of `<` and `>` as a number. */
  number?: number;
}

/** One way to read an expression: the field before an operator at some position, and the operand after it. */
interface Split {
  field: string;
  op: WhereOp;
  value: string;
}

const OPERATORS_HINT = 'Write Field=value, Field!=value, Field~text (contains, any case), Field<number or Field>number; quote it for the shell.';

/**
 * Every way to read `expr` as `field op value` with a non-empty field, leftmost operator first: a field name
 * may itself hold `=`, `!`, `~`, `<` or `>`, so which operator is the one is decided by the schema
 * (resolveWhere). At a `!=`, both `!=` and a field ending in `!` followed by `=` are candidates.
 */
function splits(expr: string): Split[] {
  const out: Split[] = [];
  for (let i = 1; i < expr.length; i++) {
    const c = expr[i]!;
    if (c === '!' && expr[i + 1] === '=') out.push({ field: expr.slice(0, i), op: '!=', value: expr.slice(i + 2) });
    else if (c === '=' || c === '~' || c === '<' || c === '>') out.push({ field: expr.slice(0, i), op: c, value: expr.slice(i + 1) });
  }
  return out;
}

const LEADING_OPERATOR = /^(!=|[=~<>])/;

const named = (expr: string) => `--where '${terminalText(expr)}'`;

/**
 * Check the syntax of an expression without the schema (before any request): it must have an operator after
 * a non-empty field name. A UsageError naming the expression otherwise.
 */
export function checkWhereSyntax(expr: string): void {
  if (splits(expr).length > 0) return;
  const why = LEADING_OPERATOR.test(expr) ? 'the field name before the operator is empty' : 'it has no operator';
  throw new UsageError(`${named(expr)}: ${why}`, { hint: OPERATORS_HINT });
}

/**
 * A number as `<` and `>` read one: decimal digits with an optional sign, point and exponent (`3`, `-2.5`,
 * `1e3`), spaces around allowed. Not `0x10`, `Infinity` or the empty string, which Number() would accept.
 */
export function asNumber(text: string): number | undefined {
  const t = text.trim();
  if (!/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(t)) return undefined;
  const n = Number(t);
  return Number.isFinite(n) ? n : undefined;
}

/**
 * The expressions read against the board's field names (`_id` always allowed): for each, the leftmost
 * operator whose left side is exactly a field name (case included, spec 2.2). A `<`/`>` operand that is no
 * number, or an expression whose every reading names no field, is a UsageError naming the expression (the
 * latter with the closest field name, `did you mean`). `unknown` instead of throwing for a name not found,
 * so a caller can look again in a fresh schema.
 */
export function resolveWhere(exprs: readonly string[], fields: readonly (Field | string)[]): { terms: WhereTerm[]; unknown?: string } {
  const names = fields.map((f) => (typeof f === 'string' ? f : f.name));
  const known = new Set(names);
  const terms: WhereTerm[] = [];
  for (const expr of exprs) {
    checkWhereSyntax(expr);
    const found = splits(expr).find((s) => s.field === '_id' || known.has(s.field));
    if (!found) return { terms, unknown: expr };
    const term: WhereTerm = { expr, ...found };
    if (found.op === '<' || found.op === '>') {
      term.number = asNumber(found.value);
      if (term.number === undefined) {
        const operand = found.value === '' ? 'nothing' : `'${terminalText(found.value)}', which is not a number`;
        throw new UsageError(`${named(expr)}: ${found.op} compares numbers, and it is followed by ${operand}`, { hint: OPERATORS_HINT });
      }
    }
    terms.push(term);
  }
  return { terms };
}

/**
 * The UsageError for an expression that names no field: the reading whose field is closest to a field name,
 * with that name (`--where 'Stauts=Open': unknown field 'Stauts' (did you mean 'Status'?)`).
 */
export function unknownWhereField(expr: string, fields: readonly (Field | string)[]): UsageError {
  // `!=x`, `<3`: read as a field named `!` or `<`, which the board does not have.
  if (LEADING_OPERATOR.test(expr)) return new UsageError(`${named(expr)}: the field name before the operator is empty`, { hint: OPERATORS_HINT });
  const candidates = checkKeys(
    splits(expr).map((s) => s.field),
    fields,
  );
  const best = candidates.find((c) => c.suggestion !== undefined) ?? candidates[0]!;
  return new UsageError(`${named(expr)}: ${describeUnknownKeys([best])}; field names are case-sensitive`, {
    hint: 'Run `cardboard schema` for the exact names.',
  });
}

/**
 * The expressions read with no schema at hand (a listener without a board): each splits at its leftmost
 * operator, as a field name holding no operator character reads anyway. `<`/`>` operands are checked as
 * resolveWhere checks them.
 */
export function whereWithoutSchema(exprs: readonly string[]): WhereTerm[] {
  return parseWhere(
    exprs,
    exprs.map((expr) => {
      checkWhereSyntax(expr);
      return splits(expr)[0]!.field;
    }),
  );
}

/** Resolve, or throw unknownWhereField for the first expression that names no field. */
export function parseWhere(exprs: readonly string[], fields: readonly (Field | string)[]): WhereTerm[] {
  const { terms, unknown } = resolveWhere(exprs, fields);
  if (unknown !== undefined) throw unknownWhereField(unknown, fields);
  return terms;
}

/**
 * The expressions read against the board's schema (api.schema() may answer from a cache: a name not found
 * there is looked for once more in a fresh copy, as checkKeysAgainstBoard does).
 */
export async function whereAgainstBoard(api: Pick<Api, 'schema'>, exprs: readonly string[]): Promise<WhereTerm[]> {
  const first = resolveWhere(exprs, await api.schema());
  if (first.unknown === undefined) return first.terms;
  return parseWhere(exprs, await api.schema({ refresh: true }));
}

/**
 * A card's value as the filter reads it: a string as it is, a number or boolean as its JSON text, null or a
 * missing key as "" (so `Status=` finds cards without a Status and `Status!=` those with one), an array or
 * object as its JSON text.
 */
export function whereText(card: Card, field: string): string {
  const value: unknown = Object.hasOwn(card, field) ? (card as Record<string, unknown>)[field] : undefined;
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

/** Whether a card passes one term; the operand of `~` is already in lower case (whereFilter). */
function passes(card: Card, term: WhereTerm): boolean {
  const text = whereText(card, term.field);
  switch (term.op) {
    case '=':
      return text === term.value;
    case '!=':
      return text !== term.value;
    case '~':
      return text.toLowerCase().includes(term.value);
    case '<':
    case '>': {
      const n = asNumber(text);
      if (n === undefined) return false;
      return term.op === '<' ? n < term.number! : n > term.number!;
    }
  }
}

/**
 * The filter of several terms, all of which must hold (AND); no terms: every card. `=` and `!=` compare the
 * text exactly; `~` is "contains", ignoring case as `grep -i` does; `<` and `>` compare numbers, and a card
 * value that is no number (asNumber) never matches either.
 */
export function whereFilter(terms: readonly WhereTerm[]): (card: Card) => boolean {
  if (terms.length === 0) return () => true;
  const ready = terms.map((t) => (t.op === '~' ? { ...t, value: t.value.toLowerCase() } : t));
  return (card) => ready.every((t) => passes(card, t));
}
