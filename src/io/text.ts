/** A value as one cell of text: strings as they are, null/undefined empty, anything else as JSON. */
export function valueText(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

/**
 * One tab-separated field. Tab, newline, carriage return and backslash are escaped as `\t`, `\n`, `\r`
 * and `\\`, so every record stays on one line with the same number of fields (for `cut`, `awk`, `while read`).
 */
export function tsvField(value: unknown): string {
  return valueText(value).replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r'));
}

/** One tab-separated line, newline included. */
export function tsvRow(values: readonly unknown[]): string {
  return `${values.map(tsvField).join('\t')}\n`;
}
