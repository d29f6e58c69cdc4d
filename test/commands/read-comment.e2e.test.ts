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
  it('piped: the card as one line of JSON (ndjson), like card list (the built binary)', async () => {
    const r = await cli(emu, ['card', 'get', id], { spawn: true });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(`{"_id":"${id}","Name":"Card\\twith tab","Priority":2}\n`);
    expect(r.stderr).toBe('');
  });
  it('--format table piped: field<TAB>value lines with tabs escaped', async () => {
    const r = await cli(emu, ['card', 'get', id, '--format', 'table']);
    expect(r.stdout).toBe(`_id\t${id}\nName\tCard\\twith tab\nPriority\t2\n`);
  });
  it('--fields Name --format json: the card with _id and Name only, as --json prints it', async () => {
    const r = await cli(emu, ['card', 'get', id, '--fields', 'Name', '--format', 'json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(`{\n  "_id": "${id}",\n  "Name": "Card\\twith tab"\n}\n`);
    expect((await cli(emu, ['card', 'get', id, '--fields', 'Name', '--json'])).stdout).toBe(r.stdout);
  });
  it('--fields picks and orders the keys (_id first unless listed) of ndjson, csv and the tsv table, as in card list', async () => {
    const nd = await cli(emu, ['card', 'get', id, '--fields', 'Priority, Name', '--format', 'ndjson']);
    expect(nd.stdout).toBe(`{"_id":"${id}","Priority":2,"Name":"Card\\twith tab"}\n`);
    const listed = await cli(emu, ['card', 'get', id, '--fields', 'Priority,_id']);
    expect(listed.stdout).toBe(`{"Priority":2,"_id":"${id}"}\n`);
    const csv = await cli(emu, ['card', 'get', id, '--fields', 'Name,Owner', '--format', 'csv']);
    expect(csv.stdout).toBe(`_id,Name,Owner\r\n${id},Card\twith tab,\r\n`);
    const tsv = await cli(emu, ['card', 'get', id, '--fields', 'Priority', '--format', 'table']);
    expect(tsv.stdout).toBe(`_id\t${id}\nPriority\t2\n`);
  });
  it('--format csv without --fields: _id and the fields in schema order, as card list writes them', async () => {
    const r = await cli(emu, ['card', 'get', id, '--format', 'csv']);
    const list = await cli(emu, ['card', 'list', '--format', 'csv']);
    expect(r.stdout).toBe(`_id,Name,Status,Owner,Priority\r\n${id},Card\twith tab,,,2\r\n`);
    expect(list.stdout.split('\r\n')[0]).toBe('_id,Name,Status,Owner,Priority');
  });
  it('an unknown field in --fields: the same error as card list, exit 2, and the card is not asked for', async () => {
    const get = await cli(emu, ['card', 'get', id, '--fields', 'Name,status']);
    const list = await cli(emu, ['card', 'list', '--fields', 'Name,status']);
    expect(get.code).toBe(2);
    expect(list.code).toBe(2);
    expect(get.stdout).toBe('');
    expect(get.stderr).toMatch(/^error: unknown field 'status' \(did you mean 'Status'\?\); field names are case-sensitive\nhint: .*--fields takes exact field names\.\n/);
    expect(get.stderr.replaceAll('card get [options] <cardId>', 'card list [options]').replaceAll('card get', 'card list')).toBe(list.stderr);
    expect(emu.requests().filter((q) => q.path.includes('/card/'))).toEqual([]);
  });
  it('--json beside another --format, or an empty --fields, is a usage error before any request', async () => {
    const both = await cli(emu, ['card', 'get', id, '--json', '--format', 'ndjson']);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/^error: --json and --format ndjson cannot be used together\n/);
    const empty = await cli(emu, ['card', 'get', id, '--fields', ' , ']);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/^error: --fields needs at least one field name\n/);
    expect(emu.requests()).toEqual([]);
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
