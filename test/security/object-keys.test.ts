// No user string is a key of a plain object. Board aliases, field names, CSV headers
// and card keys named after Object.prototype's members (`toString`, `constructor`, `__proto__`,
// `hasOwnProperty`, `valueOf`) are plain names: no crash, nothing dropped.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePairs } from '../../src/commands/card/pairs.js';
import { decodeBody } from '../../src/http/body.js';
import { htmlToText } from '../../src/http/message.js';
import { headersFromRaw, outgoingHeaders } from '../../src/webhook/delivery.js';
import { configStore, storedBoard } from '../../src/config/store.js';
import { resolveSelection } from '../../src/config/resolve.js';
import { createContext } from '../../src/context.js';
import { normalizeBoards } from '../../src/emulator/boards.js';
import { parseFaults } from '../../src/emulator/faults.js';
import { cardKey } from '../../src/import/match-index.js';
import { mappingToFile } from '../../src/import/mapping.js';
import { runMain, tempDir } from '../helpers/cli.js';
import { type RunningEmulator, startTestEmulator } from '../helpers/emulator.js';

const NAMES = ['toString', 'constructor', '__proto__', 'hasOwnProperty', 'valueOf'];
const BOARD = 'b-keys';
const TOKEN = 'tok-keys-0123456789';
const CF_BOARD = 'b-keys-cf';
const CF_TOKEN = 'tok-keys-cf-0123456789';
const PLAIN_BOARD = 'b-keys-plain';
const PLAIN_TOKEN = 'tok-keys-plain-0123456789';

let emu: RunningEmulator;
beforeAll(async () => {
  emu = await startTestEmulator({
    boards: {
      [BOARD]: { token: TOKEN, fields: ['Name', ...NAMES], updateMode: 'Update if exists', createFields: false, webhookUrl: null, signingKey: 'sk-keys-0123456789' },
      [CF_BOARD]: { token: CF_TOKEN, fields: ['Name'], updateMode: 'Update if exists', createFields: true, webhookUrl: null, signingKey: 'sk-keys-cf-0123456789' },
      [PLAIN_BOARD]: { token: PLAIN_TOKEN, fields: ['Name', 'Status'], updateMode: 'Update if exists', createFields: false, webhookUrl: null, signingKey: 'sk-keys-plain-0123456789' },
    },
  });
});
afterAll(() => emu.close());

/** A config dir holding one board stored as `work` (the default). */
function configWithWork(): string {
  const dir = tempDir();
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ defaultBoard: 'work', boards: { work: { id: BOARD, baseUrl: emu.url, token: TOKEN } } }));
  return dir;
}

describe('board aliases named like Object.prototype members', () => {
  it.each(NAMES)('--board %s is an unknown alias or id, never a crash', async (name) => {
    const r = await runMain(['--board', name, 'schema'], { configDir: configWithWork() });
    expect(r.stderr).not.toMatch(/This is a bug|TypeError|at .*\.js/);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`No base URL for board ${name}`);
  });

  it.each(NAMES)('board use/remove/set-signing-key %s is refused as not stored, and later commands still work', async (name) => {
    const dir = configWithWork();
    for (const args of [['board', 'use', name], ['board', 'remove', name], ['board', 'set-signing-key', name]]) {
      const r = await runMain(args, { configDir: dir, input: 'sk-0123456789\n' });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`No board stored as "${name}"`);
    }
    expect(JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')).defaultBoard).toBe('work');
    const after = await runMain(['schema'], { configDir: dir });
    expect(after.stderr).toBe('');
    expect(after.code).toBe(0);
  });

  it('a default left at `toString` by an older version gives a usage error, not a crash', async () => {
    const dir = configWithWork();
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ defaultBoard: 'toString', boards: { work: { id: BOARD, baseUrl: emu.url, token: TOKEN } } }));
    const r = await runMain(['schema'], { configDir: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('No base URL for board toString');
  });

  it('stores, resolves, lists and removes aliases that are member names', async () => {
    const dir = tempDir();
    const env = { CARDBOARD_CONFIG_DIR: dir };
    for (const name of ['toString', 'constructor', 'hasOwnProperty', 'valueOf']) {
      const r = await runMain(['--base-url', emu.url, 'board', 'add', name, '--id', BOARD, '--token-stdin'], { configDir: dir, input: `${TOKEN}\n` });
      expect(r.stderr).toContain(`Saved board "${name}"`);
      expect(r.code).toBe(0);
    }
    expect(Object.keys((await configStore(env).read()).boards).sort()).toEqual(['constructor', 'hasOwnProperty', 'toString', 'valueOf']);
    const used = await runMain(['board', 'use', 'constructor'], { configDir: dir });
    expect(used.code).toBe(0);
    const schema = await runMain(['--board', 'valueOf', 'schema'], { configDir: dir });
    expect(schema.code).toBe(0);
    expect(schema.stdout).toContain('hasOwnProperty');
    expect((await runMain(['board', 'remove', 'toString'], { configDir: dir })).code).toBe(0);
    expect(Object.keys((await configStore(env).read()).boards).sort()).toEqual(['constructor', 'hasOwnProperty', 'valueOf']);
  });

  it('a hand-edited config with a `__proto__` alias keeps it as a board', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'config.json'), `{"boards":{"__proto__":{"id":"${BOARD}","baseUrl":"${emu.url}","token":"${TOKEN}"}}}`);
    const env = { CARDBOARD_CONFIG_DIR: dir };
    const config = (await configStore(env).read());
    expect(Object.keys(config.boards)).toEqual(['__proto__']);
    expect(storedBoard(config, '__proto__')?.id).toBe(BOARD);
    expect(storedBoard(config, 'toString')).toBeUndefined();
    const sel = resolveSelection(createContext({ env, globals: { board: '__proto__' } }), config);
    expect([sel.alias, sel.id?.value, sel.baseUrl?.value]).toEqual(['__proto__', BOARD, emu.url]);
    await configStore(env).update((c) => {
      c.defaultBoard = '__proto__';
    });
    expect(JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')).boards).toEqual(JSON.parse(`{"__proto__":{"id":"${BOARD}","baseUrl":"${emu.url}","token":"${TOKEN}"}}`));
  });
});

describe('card keys named like Object.prototype members', () => {
  it('parsePairs keeps every name as an own key, `__proto__` included', () => {
    const pairs = parsePairs(NAMES.map((n) => `${n}=v-${n}`));
    expect(Object.keys(pairs)).toEqual(NAMES);
    expect(JSON.parse(JSON.stringify({ ...pairs }))).toEqual(JSON.parse(`{${NAMES.map((n) => `"${n}":"v-${n}"`).join(',')}}`));
  });

  it('card put __proto__=x reaches a board that has the field', async () => {
    const env = { CARDBOARD_BASE_URL: emu.url, CARDBOARD_BOARD: BOARD, CARDBOARD_TOKEN: TOKEN };
    const r = await runMain(['card', 'put', 'Name=p1', '__proto__=x', 'constructor:=1', 'toString=t'], { env });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const card = emu.state()[BOARD]!.cards.find((c) => c.Name === 'p1')!;
    expect(Object.hasOwn(card, '__proto__')).toBe(true);
    expect(JSON.parse(JSON.stringify(card))).toEqual(JSON.parse(`{"_id":"${card._id}","Name":"p1","__proto__":"x","constructor":1,"toString":"t"}`));
 
    const data = await runMain(['card', 'put', '--data', '{"Name":"p3","__proto__":"from data"}'], { env });
    expect(data.code).toBe(0);
    const fromData = emu.state()[BOARD]!.cards.find((c) => c.Name === 'p3')!;
    expect(Object.hasOwn(fromData, '__proto__') && (fromData as Record<string, unknown>)['__proto__']).toBe('from data');
  });

  it('card put __proto__=x --allow-unknown creates the field on a Create Fields board', async () => {
    const env = { CARDBOARD_BASE_URL: emu.url, CARDBOARD_BOARD: CF_BOARD, CARDBOARD_TOKEN: CF_TOKEN };
    const r = await runMain(['card', 'put', 'Name=p2', '__proto__=x', '--allow-unknown'], { env });
    expect(r.code).toBe(0);
    const state = emu.state()[CF_BOARD]!;
    expect(state.fields.map((f) => f.name)).toContain('__proto__');
    const card = state.cards.find((c) => c.Name === 'p2')!;
    expect(Object.hasOwn(card, '__proto__') && (card as Record<string, unknown>)['__proto__']).toBe('x');
  });
});

describe('CSV headers and board fields named like Object.prototype members', () => {
  const csv = () => {
    const dir = tempDir();
    const file = join(dir, 'in.csv');
    writeFileSync(file, `Name,${NAMES.join(',')}\nrow1,${NAMES.map((n) => `c-${n}`).join(',')}\n`);
    return file;
  };

  it('--dry-run maps each to the field of that name', async () => {
    const env = { CARDBOARD_BASE_URL: emu.url, CARDBOARD_BOARD: BOARD, CARDBOARD_TOKEN: TOKEN };
    const r = await runMain(['import', csv(), '--dry-run'], { env });
    expect(r.code).toBe(0);
    for (const n of NAMES) expect(r.stdout).toContain(`${n} -> ${n}   [own name]`);
  });

  it('--dry-run on a board without them reports them as unknown columns (exit 2)', async () => {
    const env = { CARDBOARD_BASE_URL: emu.url, CARDBOARD_BOARD: PLAIN_BOARD, CARDBOARD_TOKEN: PLAIN_TOKEN };
    const r = await runMain(['import', csv(), '--dry-run'], { env });
    expect(r.code).toBe(2);
    for (const n of NAMES) expect(r.stderr).toContain(`column '${n}'`);
    expect(r.stderr).not.toMatch(/This is a bug/);
  });

  it('a real import sends every column as an own key', async () => {
    const env = { CARDBOARD_BASE_URL: emu.url, CARDBOARD_BOARD: BOARD, CARDBOARD_TOKEN: TOKEN };
    const r = await runMain(['import', csv()], { env });
    expect(r.code).toBe(0);
    const card = emu.state()[BOARD]!.cards.find((c) => c.Name === 'row1')!;
    expect(Object.keys(card).sort()).toEqual(['Name', '_id', ...NAMES].sort());
    for (const n of NAMES) expect((card as Record<string, unknown>)[n]).toBe(`c-${n}`);
  });

  it('a saved mapping keeps a `__proto__` header', () => {
    const file = mappingToFile([{ header: '__proto__', index: 0, target: { kind: 'field', field: 'Name' }, how: 'own name' }]);
    expect(JSON.stringify(file)).toBe('{"__proto__":"Name"}');
  });
});

describe('the emulator', () => {
  it('takes board ids and fault kinds named like Object.prototype members as plain strings', () => {
    const boards = normalizeBoards(JSON.parse('{"__proto__":{"token":"t","fields":["__proto__"]},"toString":{"token":"u","fields":["A"]}}'));
    expect(Object.keys(boards)).toEqual(['__proto__', 'toString']);
    expect(() => parseFaults('toString:0.5')).toThrow(/unknown fault "toString"/);
    expect(() => parseFaults('constructor:0.5')).toThrow(/unknown fault/);
  });

  it('serves a board whose id is `__proto__`', async () => {
    const e = await startTestEmulator({ boards: JSON.parse('{"__proto__":{"token":"tok-proto-0123456789","fields":["Name"]}}') });
    try {
      const env = { CARDBOARD_BASE_URL: e.url, CARDBOARD_BOARD: '__proto__', CARDBOARD_TOKEN: 'tok-proto-0123456789' };
      const r = await runMain(['schema', '--json'], { env });
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('"Name"');
    } finally {
      await e.close();
    }
  });
});

describe('--match-on keys are own values only', () => {
  it('a card without its own __proto__/constructor has no key for those fields; one with it keeps its value', () => {
    // JSON.parse makes "__proto__" an own key, as a page from the service would.
    const own = JSON.parse('{"_id":"a","__proto__":"P","constructor":"C"}') as { _id: string };
    const bare = { _id: 'b' };
    expect([cardKey(own, '__proto__'), cardKey(own, 'constructor')]).toEqual(['P', 'C']);
    // Before: Object.prototype read as the key "{}", so every card without the field shared one key.
    expect([cardKey(bare, '__proto__'), cardKey(bare, 'constructor'), cardKey(bare, 'toString')]).toEqual([undefined, undefined, undefined]);
  });
});

describe('the server\'s words are never looked up on a plain object', () => {
  it('a Content-Encoding named like a member is unsupported, not Object called as a decoder', () => {
    for (const coding of ['constructor', 'toString', '__proto__', 'valueOf']) {
      expect(() => decodeBody(Buffer.from('{}'), coding)).toThrow(`unsupported Content-Encoding ${coding.toLowerCase()}`);
    }
  });

  it('an HTML entity named like a member stays as written', () => {
    expect(htmlToText('<p>a &constructor; b &toString; c &amp; d</p>')).toBe('a &constructor; b &toString; c & d');
  });

  it('webhook headers named like members are kept as headers, and re-sent', () => {
    const headers = headersFromRaw(['__proto__', 'p', 'Constructor', 'c1', 'constructor', 'c2', 'toString', 't']);
    expect(JSON.parse(JSON.stringify(headers))).toEqual(JSON.parse('{"__proto__":"p","Constructor":"c1, c2","toString":"t"}'));
    expect(JSON.stringify(outgoingHeaders(headers, 'k'))).toBe('{"__proto__":"p","Constructor":"c1, c2","toString":"t","x-signingKey":"k"}');
  });
});
