import { describe, expect, it } from 'vitest';
import { checkKeysAgainstBoard, unknownKeysError } from '../../src/schema/check.js';
import type { Field } from '../../src/spec-types.js';

/** A schema source whose cached copy is stale until refreshed. */
function source(cached: string[], fresh: string[]) {
  const calls: boolean[] = [];
  const toFields = (names: string[]): Field[] => names.map((name, i) => ({ name, uuid: `u${i}` }));
  return {
    calls,
    schema: async (opts?: { refresh?: boolean }) => {
      calls.push(opts?.refresh ?? false);
      return toFields(opts?.refresh ? fresh : cached);
    },
  };
}

describe('checkKeysAgainstBoard', () => {
  it('uses the cached schema alone when every key is known', async () => {
    const api = source(['Name'], ['Name']);
    expect((await checkKeysAgainstBoard(api, ['Name', '_id'])).unknown).toEqual([]);
    expect(api.calls).toEqual([false]);
  });
  it('refreshes once when a key is missing from the cached schema', async () => {
    const api = source(['Name'], ['Name', 'Added']);
    const check = await checkKeysAgainstBoard(api, ['Added']);
    expect(check.unknown).toEqual([]);
    expect(check.fields.map((f) => f.name)).toEqual(['Name', 'Added']);
    expect(api.calls).toEqual([false, true]);
  });
  it('keeps a key unknown after the refresh, with its suggestion', async () => {
    const api = source(['Status'], ['Status']);
    expect((await checkKeysAgainstBoard(api, ['status'])).unknown).toEqual([{ key: 'status', suggestion: 'Status' }]);
    expect(api.calls).toEqual([false, true]);
  });
});

describe('unknownKeysError', () => {
  it('is a usage error (exit 2) naming the key and the suggestion', () => {
    const err = unknownKeysError([{ key: 'status', suggestion: 'Status' }]);
    expect(err.exitCode).toBe(2);
    expect(err.message).toContain("'status' (did you mean 'Status'?)");
    expect(err.hint).toContain('cardboard schema');
  });
});
