// Field names, CSV headers and card keys are the user's and the server's strings: `toString`, `constructor`
// and `__proto__` are plain names there. Read through `obj[name]` a plain object answers Object.prototype's
// members for them, and `obj[name] = v` with `__proto__` sets the prototype instead of adding a key. Records
// built from such names have no prototype, and reads of records parsed from JSON take own keys only.

/** A record with no prototype: any string, `__proto__` included, is a plain key of it. */
export function emptyRecord<T = unknown>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

/** The prototype of fieldRecord(): no members at all, and frozen, so none can be added. */
const NO_MEMBERS: object = Object.freeze(Object.create(null) as object);

/**
 * A record like emptyRecord's (no inherited member, `__proto__` a plain key: nothing in its prototype chain
 * defines either), made for the records built once per row of an import. V8 keeps an object with a null
 * prototype in dictionary mode from the start, so each key set, JSON.stringify and Object.keys of it is a
 * hash-table walk; this one has a prototype (itself without members) and stays in fast mode: rows with the
 * same fields share one hidden class, serialised like a plain object's.
 */
export function fieldRecord<T = unknown>(): Record<string, T> {
  return Object.create(NO_MEMBERS) as Record<string, T>;
}

/** The record's own value under `key`; undefined when it has none (never an inherited member). */
export function ownValue(record: object, key: string): unknown {
  return Object.hasOwn(record, key) ? (record as Record<string, unknown>)[key] : undefined;
}

