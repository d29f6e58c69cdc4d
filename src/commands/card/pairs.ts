import { UsageError } from '../../errors.js';
import { emptyRecord } from '../../own-keys.js';

/**
 * Parse HTTPie-style field arguments: `Field=value` is a string, `Field:=json` a raw JSON value.
 * Each splits at its FIRST `=`; a `:` just before it makes it `:=`. Names may hold spaces (quoted in the shell).
 * The result has a null prototype; spread it (`{ ...pairs }`) and every name, `__proto__` too, stays an own key.
 */
export function parsePairs(args: readonly string[]): Record<string, unknown> {
  // Null prototype: a field named `__proto__` or `constructor` is a key of the card like any other.
  const out = emptyRecord();
  for (const arg of args) {
    const eq = arg.indexOf('=');
    const raw = eq > 0 && arg[eq - 1] === ':';
    const name = raw ? arg.slice(0, eq - 1) : arg.slice(0, Math.max(eq, 0));
    if (eq < 0 || name === '') {
      throw new UsageError(`expected Field=value or Field:=<json>, got '${arg}'`, {
        hint: "Quote names with spaces: 'Due Date=2024-05-01'.",
      });
    }
    if (Object.hasOwn(out, name)) throw new UsageError(`field '${name}' is given twice`);
    const text = arg.slice(eq + 1);
    if (!raw) {
      out[name] = text;
      continue;
    }
    try {
      out[name] = JSON.parse(text);
    } catch (err) {
      throw new UsageError(`field '${name}': the value after := is not valid JSON (${text === '' ? 'empty' : text})`, {
        hint: `Use ${name}=text for a string, or valid JSON after := (numbers, true/false, null, [..], {..}, "quoted").`,
        cause: err,
      });
    }
  }
  return out;
}

/** Parse a `--data` document: it must be one JSON object. */
export function parseDataObject(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`--data is not valid JSON: ${(err as Error).message}`, { cause: err });
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new UsageError('--data must be a JSON object of field names to values', {
      hint: 'To create several cards, use `cardboard import`.',
    });
  }
  return value as Record<string, unknown>;
}
