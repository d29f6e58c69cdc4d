// The board verbs' one path to a stored board (commands/board/stored.ts): every verb that names an alias
// fails the same way when it is not stored, with the closest alias or else the stored ones, and writes nothing.
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { changeBoard, changeStoredBoard } from '../../src/commands/board/stored.js';
import { configStore } from '../../src/config/store.js';
import { runMain, tempDir } from '../helpers/cli.js';

const BOARDS = { work: { id: 'b1', baseUrl: 'https://h.example', token: 't1' }, personal: { id: 'b2', baseUrl: 'https://h.example', token: 't2' } };

/** A config dir holding "work" (the default) and "personal", written as a user's file would be. */
function configWithBoards(): string {
  const dir = join(tempDir(), 'cfg');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ defaultBoard: 'work', boards: BOARDS }), { mode: 0o600 });
  return dir;
}

/** Each verb that takes a stored alias, with what it reads from stdin. */
const VERBS: Array<[string[], string]> = [
  [['board', 'use'], ''],
  [['board', 'remove'], ''],
  [['board', 'rm'], ''],
  [['board', 'set-signing-key'], 'sk-never-stored\n'],
];

/** The usage lines a usage error of the verb ends with. */
function usage(verb: string[]): string {
  const name = verb[1] === 'rm' ? 'remove' : verb[1]!;
  const line = { use: 'board use', remove: 'board remove|rm', 'set-signing-key': 'board set-signing-key' }[name];
  return `Usage: cardboard ${line} [options] <alias>\nSee 'cardboard board ${name} --help'.\n`;
}

describe('an alias that is not stored', () => {
  it.each(VERBS)('%s: the same error and Did you mean, with the closest alias; the file is untouched', async (verb, input) => {
    const configDir = configWithBoards();
    const before = readFileSync(join(configDir, 'config.json'), 'utf8');
    const r = await runMain([...verb, 'wrok'], { configDir, input });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`error: No board stored as "wrok".\nDid you mean work?\n${usage(verb)}`);
    expect(readFileSync(join(configDir, 'config.json'), 'utf8')).toBe(before);
  });

  it.each(VERBS)('%s: no close alias: the stored ones only', async (verb, input) => {
    const r = await runMain([...verb, 'staging'], { configDir: configWithBoards(), input });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`error: No board stored as "staging".\nhint: Stored boards: work, personal.\n${usage(verb)}`);
  });

  it.each(VERBS)('%s: no board at all: how to add one, and no config directory is made', async (verb, input) => {
    const configDir = join(tempDir(), 'cfg');
    const r = await runMain([...verb, 'work'], { configDir, input });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`error: No board stored as "work".\nhint: Add one with \`cardboard board add <alias> --url <POST URL>\`.\n${usage(verb)}`);
    expect(existsSync(configDir)).toBe(false);
  });

  it('a name of Object.prototype is no stored board, and is not suggested from one', async () => {
    const r = await runMain(['board', 'use', 'constructor'], { configDir: configWithBoards() });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`error: No board stored as "constructor".\nhint: Stored boards: work, personal.\n${usage(['board', 'use'])}`);
  });
});

describe('changeBoard and changeStoredBoard', () => {
  it('hand the change the stored board, write the config 0600 and return what the change returned', async () => {
    const configDir = configWithBoards();
    const env = { CARDBOARD_CONFIG_DIR: configDir };
    const id = await changeStoredBoard(configStore(env), 'personal', (board, config) => {
      board.signingKey = 'sk-1';
      config.defaultBoard = 'personal';
      return board.id;
    });
    expect(id).toBe('b2');
    expect((await configStore(env).read())).toEqual({ defaultBoard: 'personal', boards: { ...BOARDS, personal: { ...BOARDS.personal, signingKey: 'sk-1' } } });
    expect(statSync(join(configDir, 'config.json')).mode & 0o777).toBe(0o600);
  });

  it('changeBoard hands undefined for an alias not stored yet, and may add it', async () => {
    const env = { CARDBOARD_CONFIG_DIR: configWithBoards() };
    const seen = await changeBoard(configStore(env), 'new', (board, config) => {
      config.boards.new = { id: 'b3', baseUrl: 'https://h.example', token: 't3' };
      return board;
    });
    expect(seen).toBeUndefined();
    expect(Object.keys((await configStore(env).read()).boards)).toEqual(['work', 'personal', 'new']);
  });

  it('changeStoredBoard never runs the change for an alias not stored, and writes nothing', async () => {
    const configDir = configWithBoards();
    const before = readFileSync(join(configDir, 'config.json'), 'utf8');
    let ran = false;
    const change = changeStoredBoard(configStore({ CARDBOARD_CONFIG_DIR: configDir }), 'Work', () => {
      ran = true;
    });
    await expect(change).rejects.toMatchObject({ message: 'No board stored as "Work".', suggestion: 'work', hint: undefined, exitCode: 2 });
    expect(ran).toBe(false);
    expect(readFileSync(join(configDir, 'config.json'), 'utf8')).toBe(before);
  });
});
