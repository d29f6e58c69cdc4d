// Text as PostgreSQL holds it. Its `text` cannot hold a NUL character, and `jsonb` holds neither a NUL
// (`\u0000`) nor half of a UTF-16 surrogate pair in a string: what the mirror writes is made to fit, as
// U+FFFD, where the mirror itself never reads it back (the `body` column, for SQL; the text of an unplaced
// delivery). The card as cardboard reads it back is `body_text`, JSON.stringify's text exactly: JSON
// escapes every NUL and every lone surrogate half, so that text fits `text` as it is.

/** `text` with each NUL written as U+FFFD. */
export function noNul(text: string): string {
  return text.includes('\0') ? text.replace(/\0/g, '\ufffd') : text;
}

/** `text` as a string of `jsonb` holds it: each NUL and each lone surrogate half as U+FFFD. */
export function jsonbString(text: string): string {
  return text.replace(/\0|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');
}

/**
 * An escape `\u0000`, or one of a lone surrogate half, in JSON text: JSON.stringify writes a surrogate pair
 * as its characters and escapes only a lone half. The backslashes before it come in pairs (`\\` is an
 * escaped backslash), so that `\\u0000` (a backslash, then the text "u0000") is left alone.
 */
const JSONB_UNFIT = /(?<!\\)((?:\\\\)*)\\u(?:0000|[dD][89a-fA-F][0-9a-fA-F]{2})/g;

/** JSON text written by JSON.stringify, as `jsonb` takes it: each NUL and lone surrogate half in a string as U+FFFD. */
export function jsonbText(json: string): string {
  return json.includes('\\u') ? json.replace(JSONB_UNFIT, '$1\ufffd') : json;
}

/** A string as a literal of PostgreSQL's SQL (standard_conforming_strings on): in single quotes, each doubled. */
export function quoteLiteral(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/** A value written into SQL text: a string as a literal (a NUL as U+FFFD), a number, a boolean, or NULL. */
export function sqlValue(value: string | number | boolean | null | undefined): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`${value} is not a number SQL can hold`);
    return String(value);
  }
  return quoteLiteral(noNul(value));
}

/** Values as an SQL array of `type` (`text`, `bigint`…), for unnest. */
export function sqlArray(values: readonly (string | number | boolean | null | undefined)[], type: string): string {
  return `ARRAY[${values.map(sqlValue).join(', ')}]::${type}[]`;
}
