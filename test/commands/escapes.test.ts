// In process: a server whose field names, values, ids and comment ids carry escape
// sequences, bidi overrides, CR and LF. Every line for a person shows them escaped (tables on a TTY,
// notes, ids on a TTY, errors, prompts, the dry-run report); machine outputs keep them exact.
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCardGet } from '../../src/commands/card/get.js';
import { runCardList } from '../../src/commands/card/list.js';
import { runCardPut } from '../../src/commands/card/put.js';
import { runComment } from '../../src/commands/comment/comment.js';
import { runImport } from '../../src/commands/import/execute.js';
import type { Choice, Prompter } from '../../src/commands/import/interactive.js';
import { planFromFlags } from '../../src/commands/import/plan-from-flags.js';
import { runSchema } from '../../src/commands/schema/schema.js';
import { main } from '../../src/main.js';
import { runMain, tempDir } from '../helpers/cli.js';
import { HOSTILE, HOSTILE_FIELDS, type HostileServer, hostileEnv, RAW_CONTROL, startHostileServer } from '../helpers/hostile-server.js';
import { testContext } from '../io/buffers.js';

let server: HostileServer;
let env: Record<string, string>;

beforeAll(async () => {
  server = await startHostileServer({ mode: 'escapes' });
  env = { ...hostileEnv(server), CARDBOARD_CONFIG_DIR: tempDir() };
});
afterAll(async () => {
  await server.close();
});

const io = (tty: boolean, extra: Record<string, string> = {}) => testContext({ tty, env: { ...env, ...extra } });
const rows = (text: string) => text.trimEnd().split('\n');

describe('schema', () => {
  it('TTY: the table shows hostile field names escaped, one row each', async () => {
    const { ctx, stdout } = io(true);
    await runSchema(ctx, { json: false, refresh: true });
    expect(stdout.text).not.toMatch(RAW_CONTROL);
    expect(stdout.text).toContain('\nTitle\\e]0;pwned\\a  ');
    expect(stdout.text).toContain('\nStatus\\e[1A\\e[2K  ');
    expect(stdout.text).toContain('\nevil\\u202etxt.exe  ');
    expect(stdout.text).toContain('\none\\ntwo  ');
    // The header and one row per field (Title, Status and the hostile ones): the LF in a name split no row.
    expect(rows(stdout.text)).toHaveLength(1 + 2 + HOSTILE_FIELDS.length);
  });
  it('piped: TSV keeps the names exact (only its own \\t \\n \\r \\\\ escapes)', async () => {
    const { ctx, stdout } = io(false);
    await runSchema(ctx, { json: false, refresh: false });
    expect(stdout.text).toContain(`\n${HOSTILE_FIELDS[0]}\t`);
    expect(stdout.text).toContain(`\n${HOSTILE_FIELDS[1]}\t`);
    expect(stdout.text).toContain(`\n${HOSTILE.rtl}\t`);
    expect(stdout.text).toContain('\none\\ntwo\t');
  });
});

describe('card list and card get', () => {
  it('TTY: headers and cells escaped, one line per card', async () => {
    const { ctx, stdout, stderr } = io(true);
    stdout.columns = 120;
    await runCardList(ctx, { page: 0, all: false });
    expect(stdout.text).not.toMatch(RAW_CONTROL);
    // Cells are cut to fit 120 columns, the `_id` never.
    expect(stdout.text).toMatch(/^_id +Title +Status +Title\\e\]0;pwned\\a +Status\\e\[1A\\e\[2K +evil\\u202etxt\.exe +one\\ntwo$/m);
    expect(stdout.text).toMatch(/^id\\e\]0;pwned\\a +\\e\[1A\\e\[2K +/m);
    expect(stdout.text).toMatch(/ {2}safe\\roverwritten$/m);
    // Header row + one card row (and the hostile server's one page is its last: no footer).
    expect(rows(stdout.text)).toHaveLength(2);
    // At 72 columns the last columns are left out: their names escaped in the note.
    const narrow = io(true);
    narrow.stdout.columns = 72;
    await runCardList(narrow.ctx, { page: 0, all: false });
    expect(narrow.stderr.text).toContain('(evil\\u202etxt.exe, one\\ntwo)');
    expect(narrow.stderr.text).not.toMatch(RAW_CONTROL);
    expect(stderr.text).not.toMatch(RAW_CONTROL);
  });
  it('--format json keeps every value exact, ESC and all', async () => {
    const { ctx, stdout } = io(false);
    await runCardList(ctx, { page: 0, all: false, format: 'json' });
    const [card] = JSON.parse(stdout.text) as Array<Record<string, unknown>>;
    expect(card).toEqual({ _id: `id${HOSTILE.retitle}`, Title: HOSTILE.erase, [HOSTILE.rtl]: HOSTILE.rtl, [HOSTILE.lf]: HOSTILE.cr });
  });
  it('piped table (TSV) keeps ESC and U+202E exact', async () => {
    const { ctx, stdout } = io(false);
    await runCardList(ctx, { page: 0, all: false, format: 'table' });
    expect(stdout.text).toContain(`id${HOSTILE.retitle}\t`);
    expect(stdout.text).toContain(HOSTILE.rtl);
  });
  it('the "not fields of the board" note escapes the keys it names', async () => {
    // The schema cached while the server behaved lacks the hostile names: the card's keys are left out.
    const configDir = tempDir();
    server.setMode('plain');
    try {
      await runSchema(io(false, { CARDBOARD_CONFIG_DIR: configDir }).ctx, { json: false, refresh: true });
    } finally {
      server.setMode('escapes');
    }
    const { ctx, stderr } = io(true, { CARDBOARD_CONFIG_DIR: configDir });
    await runCardList(ctx, { page: 0, all: false });
    expect(stderr.text).toContain('not shown (not fields of the board): evil\\u202etxt.exe, one\\ntwo;');
    expect(stderr.text).not.toMatch(RAW_CONTROL);
    expect(rows(stderr.text)).toHaveLength(1);
  });
  it('card get on a TTY: every value escaped', async () => {
    const { ctx, stdout } = io(true);
    await runCardGet(ctx, { cardId: 'x' });
    expect(stdout.text).not.toMatch(RAW_CONTROL);
    expect(stdout.text).toContain('safe\\roverwritten');
  });
});

describe('card put and comment print the id the server chose', () => {
  it('escaped on a TTY, and the warning naming it too (exit 5: a new card, not the update)', async () => {
    const { parts, stdout, stderr } = io(true);
    expect(await main(['card', 'put', '--id', 'mine', 'Title=x'], parts)).toBe(5);
    expect(stdout.text).toBe('new\\e]0;pwned\\aevil\\u202etxt.exe\n');
    expect(stderr.text).toContain('the board created a new card (new\\e]0;pwned\\aevil\\u202etxt.exe) instead of updating mine');
    expect(stderr.text).not.toMatch(RAW_CONTROL);
  });
  it('exact when piped (a script takes the id) and in --json', async () => {
    const piped = io(false);
    await runCardPut(piped.ctx, { fields: { Title: 'x' }, allowUnknown: false, json: false });
    expect(piped.stdout.text).toBe(`new${HOSTILE.retitle}${HOSTILE.rtl}\n`);
    const json = io(false);
    await runCardPut(json.ctx, { fields: { Title: 'x' }, allowUnknown: false, json: true });
    expect(JSON.parse(json.stdout.text)._id).toBe(`new${HOSTILE.retitle}${HOSTILE.rtl}`);
  });
  it('comment: the id escaped on a TTY', async () => {
    const { ctx, stdout } = io(true);
    await runComment(ctx, { cardId: 'c1', text: 'hi', stdin: false, json: false });
    expect(stdout.text).toBe('c\\e[1A\\e[2K\n');
  });
});

describe('errors quoting hostile names', () => {
  it('did-you-mean to hostile fields: escaped, one error line and one hint line, then the usage lines', async () => {
    const r = await runMain(['card', 'put', 'eviltxt.exe=x', 'onetwo=y'], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("'eviltxt.exe' (did you mean 'evil\\u202etxt.exe'?), 'onetwo' (did you mean 'one\\ntwo'?)");
    expect(r.stderr).not.toMatch(RAW_CONTROL);
    expect(rows(r.stderr)).toHaveLength(4);
    expect(rows(r.stderr).slice(2)).toEqual(['Usage: cardboard card put [options] [fields...]', "See 'cardboard card put --help'."]);
  });
  it('an unmapped CSV column: the suggestion and the --map to paste are escaped and stay on their line', async () => {
    const file = join(tempDir(), 'in.csv');
    writeFileSync(file, 'Title,onetwo\nx,y\n');
    const r = await runMain(['import', file], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("column 'onetwo': no field of that name; closest is 'one\\ntwo': add --map $'onetwo=one\\ntwo'");
    expect(r.stderr).not.toMatch(RAW_CONTROL);
    // The message, its one column line, the hint, the usage line and where the help is.
    expect(rows(r.stderr)).toHaveLength(5);
  });
});

describe('argument errors', () => {
  it("commander's own error quoting an argument is escaped", async () => {
    const r = await runMain(['card', 'get', 'x', `--bad${HOSTILE.retitle}`], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown option '--bad\\e]0;pwned\\a'");
    expect(r.stderr).not.toMatch(RAW_CONTROL);
  });
});

describe("the server's own error text", () => {
  it('is escaped in the error line (a 400 body with ESC, U+202E, CR, LF and C1)', async () => {
    const bad = createServer((req, res) => {
      req.resume();
      res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ reason: `bad ${HOSTILE.retitle}${HOSTILE.erase}${HOSTILE.rtl} ${HOSTILE.cr} ${HOSTILE.c1}` }));
    });
    await new Promise<void>((r) => bad.listen(0, '127.0.0.1', r));
    try {
      const r = await runMain(['schema', '--refresh'], { env: { ...env, CARDBOARD_BASE_URL: `http://127.0.0.1:${(bad.address() as AddressInfo).port}` } });
      expect(r.code).toBe(1);
      // One policy for every line a person reads: the server's ESC, BEL, C1 and bidi override are escaped as a
      // table cell's are, not dropped; CR between words is white space and becomes one space.
      expect(r.stderr).toContain(': bad \\e]0;pwned\\a\\e[1A\\e[2Kevil\\u202etxt.exe safe overwritten csi\\x9b31m\n');
      expect(r.stderr).not.toMatch(RAW_CONTROL);
    } finally {
      await new Promise<void>((r) => bad.close(() => r()));
    }
  });
});

describe('import on a terminal', () => {
  it('prompts and the dry-run report show hostile names escaped; the mapping keeps them exact', async () => {
    const asked: string[] = [];
    const prompter: Prompter = {
      async select<T>(message: string, choices: Choice<T>[]) {
        asked.push(message, ...choices.map((c) => c.name));
        return choices[0]!.value;
      },
      async confirm(message: string) {
        asked.push(message);
        return false;
      },
      async input(message: string) {
        asked.push(message);
        return '';
      },
    };
    const file = join(tempDir(), 'in.csv');
    writeFileSync(file, `Title,eviltxt.exe\nx,"${HOSTILE.erase}"\n`);
    const { ctx, stdout, stderr } = io(true);
    const posts = () => server.requests.filter((r) => r.method === 'POST').length;
    const before = posts();
    await runImport(ctx, planFromFlags(file, { map: [], skipColumn: [], concurrency: '1', empty: 'omit', dryRun: true }), { prompter });
    expect(asked.join('\n')).toContain('evil\\u202etxt.exe  (closest)');
    for (const q of asked) expect(q).not.toMatch(RAW_CONTROL);
    expect(stdout.text).toContain('eviltxt.exe -> evil\\u202etxt.exe   [prompt]');
    expect(stdout.text).toContain('"evil\\u202etxt.exe":"\\u001b[1A\\u001b[2K"');
    expect(stdout.text).not.toMatch(RAW_CONTROL);
    expect(stderr.text).not.toMatch(RAW_CONTROL);
    expect(posts()).toBe(before);
  });
});
