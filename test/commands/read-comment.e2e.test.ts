import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/cli.js';
import { BOARD_ID, type RunningEmulator, startTestEmulator, TOKEN } from '../helpers/emulator.js';
import { cli } from './helpers.js';

let emu: RunningEmulator;
let id: string;
const comments = () => emu.state()[BOARD_ID]!.comments[id] ?? [];

beforeAll(async () => {
  emu = await startTestEmulator();
  const r = await cli(emu, ['card', 'put', 'Name=Card\twith tab', 'Priority:=2']);
  id = r.stdout.trim();
});
afterAll(async () => {
  await emu.close();
});
beforeEach(() => {
  emu.resetRequests();
});

describe('schema', () => {
  it('piped: a header line and tab-separated rows in schema order', async () => {
    const r = await cli(emu, ['schema']);
    expect(r.code, r.stderr).toBe(0);
    const fields = emu.state()[BOARD_ID]!.fields;
    expect(r.stdout).toBe(`name\tuuid\n${fields.map((f) => `${f.name}\t${f.uuid}\n`).join('')}`);
  });
  it("--json prints the server's array", async () => {
    const r = await cli(emu, ['schema', '--json']);
    expect(JSON.parse(r.stdout)).toEqual(emu.state()[BOARD_ID]!.fields);
  });
  it('uses the cache within its lifetime, and --refresh asks the server again', async () => {
    const configDir = tempDir();
    await cli(emu, ['schema'], { configDir });
    await cli(emu, ['schema'], { configDir });
    expect(emu.requests().filter((r) => r.path.endsWith('/schema'))).toHaveLength(1);
    await cli(emu, ['schema', '--refresh'], { configDir });
    expect(emu.requests().filter((r) => r.path.endsWith('/schema'))).toHaveLength(2);
  });
  it('a cached schema never answers for another token: a wrong one gets its 401 (exit 4)', async () => {
    const configDir = tempDir();
    expect((await cli(emu, ['schema'], { configDir })).code).toBe(0);
    const r = await cli(emu, ['schema'], { configDir, token: 'tok-rotated-away' });
    expect(r.code).toBe(4);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^error: .*401/m);
    expect(emu.requests().filter((r) => r.path.endsWith('/schema'))).toHaveLength(2);
  });
});

describe('card get', () => {
  it('piped: field<TAB>value lines with tabs escaped', async () => {
    const r = await cli(emu, ['card', 'get', id]);
    expect(r.stdout).toBe(`_id\t${id}\nName\tCard\\twith tab\nPriority\t2\n`);
  });
  it('404 card: exit 1 with a hint naming the card id', async () => {
    const r = await cli(emu, ['card', 'get', 'no-such-card']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^error: .*404/m);
    expect(r.stderr).toMatch(/^hint: .*card id/m);
  });
  it('401 wrong token: exit 4 with a hint, the token never printed', async () => {
    const wrong = 'tok-wrong-SECRET-999';
    const r = await cli(emu, ['card', 'get', id, '--verbose'], { token: wrong });
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/^error: .*401/m);
    expect(r.stderr).toMatch(/^hint: .*token/m);
    expect(r.stderr).not.toContain(wrong);
    expect(r.stderr).not.toContain(TOKEN);
  });
  it('a card id with slashes and spaces is sent encoded in the path', async () => {
    const r = await cli(emu, ['card', 'get', 'a/b c']);
    expect(r.code).toBe(1);
    expect(emu.requests().map((q) => q.path)).toContain('/api/aptlet/b-test/card/a%2Fb%20c');
  });
});

describe('comment', () => {
  it('posts the joined words and prints the comment id', async () => {
    const r = await cli(emu, ['comment', id, 'Deployed', 'to', 'staging']);
    expect(r.code, r.stderr).toBe(0);
    const last = comments().at(-1)!;
    expect(last.content).toBe('Deployed to staging');
    expect(r.stdout).toBe(`${last.id}\n`);
  });
  it('reads stdin with -, drops the trailing newline, --json prints the Comment', async () => {
    const r = await cli(emu, ['comment', id, '-', '--json'], { input: 'line one\nline two\n' });
    expect(r.code, r.stderr).toBe(0);
    const comment = JSON.parse(r.stdout);
    expect(comment.content).toBe('line one\nline two');
    expect(comment).toEqual(comments().at(-1));
  });
  it('reads --file', async () => {
    const file = join(tempDir(), 'note.md');
    writeFileSync(file, '# Note\n\nbody\n');
    const r = await cli(emu, ['comment', id, '--file', file]);
    expect(r.code, r.stderr).toBe(0);
    expect(comments().at(-1)!.content).toBe('# Note\n\nbody');
  });
  it('refuses empty text (arguments or stdin) with exit 2 and sends nothing', async () => {
    for (const [args, input] of [[[id, '  '], ''], [[id, '-'], '\n\n'], [[id], '']] as const) {
      const r = await cli(emu, ['comment', ...args], { input });
      expect(r.code, r.stderr).toBe(2);
    }
    expect(emu.requests()).toEqual([]);
  });
  it('404 card: exit 1', async () => {
    const r = await cli(emu, ['comment', 'no-such-card', 'hi']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: .*404/m);
  });
});
