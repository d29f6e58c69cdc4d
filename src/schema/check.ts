import type { Api } from '../api/types.js';
import { UsageError } from '../errors.js';
import type { Field } from '../spec-types.js';
import { checkKeys, describeUnknownKeys, type UnknownKey } from './match.js';

/** The schema a check used and the keys it did not find there. */
interface KeyCheck {
  fields: Field[];
  unknown: UnknownKey[];
}

/**
 * Check keys against the board's schema, exactly (spec 2.2). api.schema() may answer from a cache; a
 * field added on the board since would look unknown, so a miss is re-checked once against a fresh copy.
 */
export async function checkKeysAgainstBoard(api: Pick<Api, 'schema'>, keys: string[]): Promise<KeyCheck> {
  let fields = await api.schema();
  let unknown = checkKeys(keys, fields);
  if (unknown.length > 0) {
    fields = await api.schema({ refresh: true });
    unknown = checkKeys(keys, fields);
  }
  return { fields, unknown };
}

/** The usage error for unknown keys: exit 2, nothing sent. */
export function unknownKeysError(unknown: readonly UnknownKey[], extraHint = ''): UsageError {
  return new UsageError(`${describeUnknownKeys(unknown)}; field names are case-sensitive`, {
    hint: `Run \`cardboard schema\` for the exact names.${extraHint}`,
  });
}
