// The view `card_fields` of a mirror: the card's `_id` and one column per field of the board's schema, for
// people writing SQL (`SELECT "Status", count(*) FROM card_fields GROUP BY 1`). Field names are the user's
// strings, so every one is written into SQL quoted, whatever it holds.

/**
 * A field name as a column name. SQLite compares column names ignoring the case of ASCII letters (and only
 * of those), so two fields `Status` and `status`, or a field named `_id`, would clash: the first column
 * to claim a name (ASCII letters folded) keeps it, `_id` being the card's id; a later one gets the first
 * free of `<name>_2`, `<name>_3`, … An empty name is the column `_`; a NUL (which SQL text cannot hold)
 * and a lone UTF-16 surrogate half (which UTF-8 cannot) are written as U+FFFD.
 */
export function columnNames(fieldNames: readonly string[]): string[] {
  const fold = (name: string) => name.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
  const taken = new Set(['_id']);
  return fieldNames.map((field) => {
    const base = field.replace(/\0|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd') || '_';
    let column = base;
    for (let n = 2; taken.has(fold(column)); n++) column = `${base}_${n}`;
    taken.add(fold(column));
    return column;
  });
}

/** A name as an SQL identifier: in double quotes, each quote doubled. */
export function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** Text as an SQL string literal: in single quotes, each quote doubled, a NUL spelled `char(0)` (SQL text ends at one). */
export function quoteText(text: string): string {
  return text
    .split('\0')
    .map((part) => `'${part.replace(/'/g, "''")}'`)
    .join(' || char(0) || ');
}

/**
 * The SQL of the value of `key` in the card body of the row (`cards.body`, written by JSON.stringify), as
 * json_extract returns it, in every SQLite from 3.38 (the first with `->>`) on. A path `$."key"` holds the
 * key as JSON spells it (JSON.stringify's escapes, `\\`, `\n`, `\u0000`): SQLite before 3.45 compares a
 * path's key with the key's JSON text byte for byte, and later ones compare both unescaped. No version reads
 * a `"` inside a quoted path key, so a key with one is looked up by json_each, whose `key` is unescaped.
 */
export function fieldValue(key: string): string {
  if (!key.includes('"')) return `json_extract(cards.body, ${quoteText(`$."${JSON.stringify(key).slice(1, -1)}"`)})`;
  return `(SELECT value FROM json_each(cards.body) WHERE key = ${quoteText(key)})`;
}

/** The statements that replace the view `card_fields` with one for the fields named. */
export function cardFieldsView(fieldNames: readonly string[]): string {
  const columns = columnNames(fieldNames).map((column, i) => `${fieldValue(fieldNames[i]!)} AS ${quoteIdentifier(column)}`);
  return `DROP VIEW IF EXISTS card_fields; CREATE VIEW card_fields AS SELECT ${['_id', ...columns].join(', ')} FROM cards;`;
}
