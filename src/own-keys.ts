// Field names, CSV headers and card keys are the user's and the server's strings: `toString`, `constructor`
// and `__proto__` are plain names there. Read through `obj[name]` a plain object answers Object.prototype's
// members for them, and `obj[name] = v` with `__proto__` sets the prototype instead of adding a key. Records
// built from such names have no prototype, and reads of records parsed from JSON take own keys only.

/** A record with no prototype: any string, `__proto__` included, is a plain key of it. */
export function emptyRecord<T = unknown>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

/** The record's own value under `key`; undefined when it has none (never an inherited member). */
export function ownValue(record: object, key: string): unknown {
  return Object.hasOwn(record, key) ? (record as Record<string, unknown>)[key] : undefined;
}

