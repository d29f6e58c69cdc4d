// A board name that is no stored alias, wherever it is looked up (--board, CARDBOARD_BOARD, the board verbs,
// board show): `Did you mean work?` when a stored alias is close, else the stored aliases.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { aliasAdvice, resolveCredentials } from '../../src/config/resolve.js';
import type { CardboardConfig } from '../../src/config/store.js';
import { UsageError } from '../../src/errors.js';
import { runMain, tempDir } from '../helpers/cli.js';

const BOARDS = { work: { id: 'b1', baseUrl: 'https://h.example', token: 't1' }, personal: { id: 'b2', baseUrl: 'https://h.example', token: 't2' } };
const CONFIG: CardboardConfig = { boards: BOARDS };

function configDir(): string {
  const dir = join(tempDir(), 'cfg');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ boards: BOARDS }), { mode: 0o600 });
  return dir;
}

describe('aliasAdvice', () => {
  it('the closest stored alias, else the stored ones, else nothing', () => {
    expect(aliasAdvice('wrk', CONFIG)).toEqual({ suggestion: 'work' });
    expect(aliasAdvice('Personal', CONFIG)).toEqual({ suggestion: 'personal' });
    expect(aliasAdvice('zzz', CONFIG)).toEqual({ stored: 'Stored boards: work, personal.' });
    expect(aliasAdvice('toString', CONFIG)).toEqual({ stored: 'Stored boards: work, personal.' });
    expect(aliasAdvice('wrk', { boards: {} })).toEqual({});
  });

  it('resolveCredentials: a --board or CARDBOARD_BOARD that is no stored board names the close one', () => {
    const resolve = (env: Record<string, string>, board?: string) => {
      try {
        resolveCredentials({ env, globals: { board } }, CONFIG);
      } catch (err) {
        return err;
      }
      throw new Error('resolved');
    };
    expect(resolve({}, 'wrk')).toMatchObject({ constructor: UsageError, suggestion: 'work', message: expect.stringMatching(/^No base URL for board wrk \(from --board\)/) });
    expect(resolve({ CARDBOARD_BOARD: 'persnal' })).toMatchObject({ suggestion: 'personal' });
    const far = resolve({}, 'zzz') as UsageError;
    expect(far.suggestion).toBeUndefined();
    expect(far.hint).toMatch(/^Stored boards: work, personal\. For a board not stored, pass --base-url/);
  });
});

describe('the command line', () => {
  it('`--board wrk schema`: Did you mean work?, the hint, the usage lines; nothing sent', async () => {
    const r = await runMain(['--board', 'wrk', 'schema'], { configDir: configDir() });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'error: No base URL for board wrk (from --board): it is not a stored alias or board id.\nDid you mean work?\n' +
        'hint: Pass --base-url or set CARDBOARD_BASE_URL, or store the board with `cardboard board add`.\n' +
        "Usage: cardboard schema [options]\nSee 'cardboard schema --help'.\n",
    );
  });

  it('`board show` with a name that is no stored alias says which one is close, or lists them', async () => {
    const dir = configDir();
    const close = await runMain(['--board', 'wrk', 'board', 'show'], { configDir: dir });
    expect(close.code).toBe(0);
    expect(close.stderr).toContain('Incomplete: no base URL for board wrk: pass --base-url or set CARDBOARD_BASE_URL. Did you mean work?\n');
    const far = await runMain(['board', 'show'], { configDir: dir, env: { CARDBOARD_BOARD: 'zzz' } });
    expect(far.stderr).toContain('CARDBOARD_BASE_URL. Stored boards: work, personal.\n');
  });
});
