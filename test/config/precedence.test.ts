// The precedence table of docs/boards-and-credentials.md, one case per situation, each tagged with the
// table row it proves; a last test checks that every row of that table has a case and no more.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { type Origin, resolveCredentials, resolveSelection, type Selection } from '../../src/config/resolve.js';
import type { CardboardConfig } from '../../src/config/store.js';
import { createContext, type GlobalOptions } from '../../src/context.js';
import { AuthError, UsageError } from '../../src/errors.js';
import { tempDir } from '../helpers/cli.js';

const config = (defaultBoard?: string): CardboardConfig => ({
  ...(defaultBoard ? { defaultBoard } : {}),
  boards: Object.assign(Object.create(null) as CardboardConfig['boards'], {
    hook: { id: 'b-hook', baseUrl: 'https://hook.example', token: 'tok-hook', signingKey: 'sk-hook' },
    side: { id: 'b-side', baseUrl: 'https://side.example', token: 'tok-side' },
  }),
});

/** Everything a run may have in its environment, left over from pasting the emulator's export line. */
const LEFTOVER = {
  CARDBOARD_BASE_URL: 'http://127.0.0.1:4010',
  CARDBOARD_TOKEN: 'tok-env',
  CARDBOARD_SIGNING_KEY: 'sk-env',
};

/** `[value, kind, name]` of a resolved part, or null when unset. */
type Want = [string, Origin['kind'], string] | null;
interface Case {
  row: number;
  name: string;
  globals?: GlobalOptions;
  env?: Record<string, string>;
  config?: CardboardConfig;
  alias?: string;
  id: Want;
  baseUrl: Want;
  token: Want;
  signingKey: Want;
}

const CASES: Case[] = [
  {
    row: 1,
    name: '--board <alias> keeps its own URL, token and key over leftover variables',
    globals: { board: 'hook' },
    env: LEFTOVER,
    config: config('side'),
    alias: 'hook',
    id: ['b-hook', 'flag', '--board'],
    baseUrl: ['https://hook.example', 'stored', 'hook'],
    token: ['tok-hook', 'stored', 'hook'],
    signingKey: ['sk-hook', 'stored', 'hook'],
  },
  {
    row: 1,
    name: '--board <alias> without a stored key: the key from CARDBOARD_SIGNING_KEY fills in',
    globals: { board: 'side' },
    env: LEFTOVER,
    config: config(),
    alias: 'side',
    id: ['b-side', 'flag', '--board'],
    baseUrl: ['https://side.example', 'stored', 'side'],
    token: ['tok-side', 'stored', 'side'],
    signingKey: ['sk-env', 'env', 'CARDBOARD_SIGNING_KEY'],
  },
  {
    row: 1,
    name: '--board <alias> with --base-url: the flag beats the stored URL, the token stays stored',
    globals: { board: 'hook', baseUrl: 'https://proxy.example' },
    env: LEFTOVER,
    config: config(),
    alias: 'hook',
    id: ['b-hook', 'flag', '--board'],
    baseUrl: ['https://proxy.example', 'flag', '--base-url'],
    token: ['tok-hook', 'stored', 'hook'],
    signingKey: ['sk-hook', 'stored', 'hook'],
  },
  {
    row: 1,
    name: '--board <id of a stored board> (no base URL given) is that board',
    globals: { board: 'b-hook' },
    config: config(),
    alias: 'hook',
    id: ['b-hook', 'flag', '--board'],
    baseUrl: ['https://hook.example', 'stored', 'hook'],
    token: ['tok-hook', 'stored', 'hook'],
    signingKey: ['sk-hook', 'stored', 'hook'],
  },
  {
    row: 2,
    name: 'CARDBOARD_BOARD=<alias> keeps its own URL and token over the other variables',
    env: { ...LEFTOVER, CARDBOARD_BOARD: 'hook' },
    config: config('side'),
    alias: 'hook',
    id: ['b-hook', 'env', 'CARDBOARD_BOARD'],
    baseUrl: ['https://hook.example', 'stored', 'hook'],
    token: ['tok-hook', 'stored', 'hook'],
    signingKey: ['sk-hook', 'stored', 'hook'],
  },
  {
    row: 2,
    name: '--board beats CARDBOARD_BOARD',
    globals: { board: 'side' },
    env: { CARDBOARD_BOARD: 'hook' },
    config: config(),
    alias: 'side',
    id: ['b-side', 'flag', '--board'],
    baseUrl: ['https://side.example', 'stored', 'side'],
    token: ['tok-side', 'stored', 'side'],
    signingKey: null,
  },
  {
    row: 3,
    name: 'the default board alone: everything stored',
    config: config('hook'),
    alias: 'hook',
    id: ['b-hook', 'default', 'hook'],
    baseUrl: ['https://hook.example', 'stored', 'hook'],
    token: ['tok-hook', 'stored', 'hook'],
    signingKey: ['sk-hook', 'stored', 'hook'],
  },
  {
    row: 3,
    name: 'the default board is a fallback: CARDBOARD_* variables beat its parts',
    env: LEFTOVER,
    config: config('hook'),
    alias: 'hook',
    id: ['b-hook', 'default', 'hook'],
    baseUrl: ['http://127.0.0.1:4010', 'env', 'CARDBOARD_BASE_URL'],
    token: ['tok-env', 'env', 'CARDBOARD_TOKEN'],
    signingKey: ['sk-env', 'env', 'CARDBOARD_SIGNING_KEY'],
  },
  {
    row: 3,
    name: 'the default board with --base-url: the flag beats the variable',
    globals: { baseUrl: 'https://flag.example' },
    env: { CARDBOARD_BASE_URL: 'https://env.example' },
    config: config('side'),
    alias: 'side',
    id: ['b-side', 'default', 'side'],
    baseUrl: ['https://flag.example', 'flag', '--base-url'],
    token: ['tok-side', 'stored', 'side'],
    signingKey: null,
  },
  {
    row: 4,
    name: 'CI: CARDBOARD_BOARD=<id> with no config at all',
    env: { ...LEFTOVER, CARDBOARD_BOARD: 'b-ci' },
    id: ['b-ci', 'env', 'CARDBOARD_BOARD'],
    baseUrl: ['http://127.0.0.1:4010', 'env', 'CARDBOARD_BASE_URL'],
    token: ['tok-env', 'env', 'CARDBOARD_TOKEN'],
    signingKey: ['sk-env', 'env', 'CARDBOARD_SIGNING_KEY'],
  },
  {
    row: 4,
    name: '--board <id> that is no stored board, beside a default board: nothing of the default is used',
    globals: { board: 'b-other', baseUrl: 'https://flag.example' },
    env: { CARDBOARD_BASE_URL: 'https://env.example', CARDBOARD_TOKEN: 'tok-env' },
    config: config('hook'),
    id: ['b-other', 'flag', '--board'],
    baseUrl: ['https://flag.example', 'flag', '--base-url'],
    token: ['tok-env', 'env', 'CARDBOARD_TOKEN'],
    signingKey: null,
  },
  {
    row: 4,
    name: 'a stored board id at another base URL is another board (an id is unique on one service only)',
    env: { CARDBOARD_BOARD: 'b-hook', CARDBOARD_BASE_URL: 'https://staging.example', CARDBOARD_TOKEN: 'tok-env' },
    config: config(),
    id: ['b-hook', 'env', 'CARDBOARD_BOARD'],
    baseUrl: ['https://staging.example', 'env', 'CARDBOARD_BASE_URL'],
    token: ['tok-env', 'env', 'CARDBOARD_TOKEN'],
    signingKey: null,
  },
  {
    row: 5,
    name: 'nothing names a board and there is no default',
    env: { CARDBOARD_TOKEN: 'tok-env' },
    config: config(),
    id: null,
    baseUrl: null,
    token: ['tok-env', 'env', 'CARDBOARD_TOKEN'],
    signingKey: null,
  },
];

const want = (p: Selection['id']): Want => (p ? [p.value, p.origin.kind, p.origin.name] : null);
const ctxFor = (c: Pick<Case, 'env' | 'globals'>) =>
  createContext({ env: { CARDBOARD_CONFIG_DIR: tempDir(), ...c.env }, globals: c.globals ?? {} });

describe('precedence (the table of docs/boards-and-credentials.md)', () => {
  it.each(CASES.map((c) => [`row ${c.row}: ${c.name}`, c] as const))('%s', (_, c) => {
    const sel = resolveSelection(ctxFor(c), c.config ?? { boards: Object.create(null) });
    expect({ alias: sel.alias, id: want(sel.id), baseUrl: want(sel.baseUrl), token: want(sel.token), signingKey: want(sel.signingKey) }).toEqual({
      alias: c.alias,
      id: c.id,
      baseUrl: c.baseUrl,
      token: c.token,
      signingKey: c.signingKey,
    });
  });

  it('the commands use the same resolution: credentials and their sources match the selection', () => {
    for (const c of CASES.filter((k) => k.id && k.baseUrl && k.token)) {
      const ctx = ctxFor(c);
      const { board, token } = resolveCredentials(ctx, c.config ?? { boards: Object.create(null) });
      expect([board.id, board.baseUrl, token], c.name).toEqual([c.id![0], c.baseUrl![0], c.token![0]]);
      expect(board.origins?.token, c.name).toEqual({ kind: c.token![1], name: c.token![2] });
    }
  });

  it('row 5 and the gaps of row 4 fail with the documented exit codes, naming where the board came from', () => {
    const none = () => resolveCredentials(ctxFor({}), config());
    expect(none).toThrow(UsageError);
    const noUrl = () => resolveCredentials(ctxFor({ env: { CARDBOARD_BOARD: 'b-x', CARDBOARD_TOKEN: 't' } }), config());
    expect(noUrl).toThrow(UsageError);
    expect(noUrl).toThrow('No base URL for board b-x (from CARDBOARD_BOARD)');
    const noToken = () => resolveCredentials(ctxFor({ globals: { board: 'b-x', baseUrl: 'https://x.example' } }), config());
    expect(noToken).toThrow(AuthError);
    expect(noToken).toThrow('No token for board b-x (from --board)');
  });

  it('every row of the documented table has a case, and every case a row', () => {
    const readme = readFileSync(new URL('../../docs/boards-and-credentials.md', import.meta.url), 'utf8');
    const table = readme.slice(readme.indexOf('| # | the board is'));
    const rows = table.split('\n').filter((line) => /^\| \d+ \|/.test(line)).map((line) => Number(/^\| (\d+) \|/.exec(line)![1]));
    expect(rows).toEqual([1, 2, 3, 4, 5]);
    expect([...new Set(CASES.map((c) => c.row))]).toEqual(rows);
  });
});
