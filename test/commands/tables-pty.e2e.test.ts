// Tables on a terminal against the emulator with a 30-field board: at 40, 80 (the built binary on a real
// pseudo-terminal) and 200 columns no table line is wider than the terminal and every `_id` is whole; long
// output goes through the pager, never with --no-pager or when piped; quitting the pager early or Ctrl-C
// while it runs exits cleanly.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import stringWidth from 'string-width';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, runMain, tempDir } from '../helpers/cli.js';
import { type RunningEmulator, startTestEmulator } from '../helpers/emulator.js';
import { runOnPty } from '../helpers/pty.js';
import { BufferStream } from '../io/buffers.js';

const BOARD = 'b-wide';
const TOKEN = 'tok-wide-123';
const FIELDS = ['Name', 'Status', 'Owner', 'Due Date', 'Description', '担当者', ...Array.from({ length: 24 }, (_, i) => `Field ${i + 7}`)];
const FAMILY = '👩‍👩‍👧‍👦';

let emu: RunningEmulator;
let env: Record<string, string>;
const ids: string[] = [];

async function put(body: Record<string, unknown>): Promise<string> {
  const r = await fetch(`${emu.url}/api/aptlet/${BOARD}`, { method: 'POST', headers: { 'x-token': TOKEN, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return ((await r.json()) as { _id: string })._id;
}

beforeAll(async () => {
  emu = await startTestEmulator({ boards: { [BOARD]: { token: TOKEN, fields: FIELDS } }, seedCards: 40, pageSize: 50 });
  ids.push(await put({ Name: `漢字テキストの長い説明です ${FAMILY}`, Status: 'Open', Owner: `Zoë e\u0301e\u0301e\u0301 🧑‍💻`, Description: 'A long description that goes on and on about the card and what it needs before it can be closed' }));
  ids.push(await put({ Name: 'Second', 担当者: '山田太郎', 'Due Date': '2026-12-01' }));
  env = { CARDBOARD_BASE_URL: emu.url, CARDBOARD_BOARD: BOARD, CARDBOARD_TOKEN: TOKEN, CARDBOARD_CONFIG_DIR: tempDir() };
});
afterAll(async () => {
  await emu.close();
});

const plain = (screen: string) => screen.replace(/\u001b\[[0-?]*[ -/]*[@-~]/g, '');
/** The lines of the table on the screen: from its header row to the first line that is not a row (a note, a footer, the end). */
function tableLines(screen: string): string[] {
  const lines = plain(screen).split(/\r?\n/);
  const start = lines.findIndex((l) => /^(_id|field|name)( {2}|$)/.test(l));
  if (start < 0) return [];
  const end = lines.findIndex((l, i) => i > start && (l === '' || /^(page \d|first \d|\d+ columns? not shown|not shown)/.test(l)));
  return lines.slice(start, end < 0 ? undefined : end);
}

/**
 * The CLI in this process with stdout and stderr terminal streams `cols` wide (the same output as on a pty of
 * that width, stderr after stdout; such a stream has no rows, so nothing is paged).
 */
async function onTerminalStream(args: string[], vars: Record<string, string | undefined>, size: { cols: number }): Promise<{ code: number | null; screen: string }> {
  const stdout = new BufferStream(true, size.cols);
  const stderr = new BufferStream(true, size.cols);
  const r = await runMain(args, { env: vars, configDir: vars.CARDBOARD_CONFIG_DIR, context: (parts) => ({ ...parts, stdout, stderr }) });
  return { code: r.code, screen: stdout.text + stderr.text };
}

describe('tables fit the terminal (30-field board)', () => {
  // The built binary on a real pty at 80 columns; the same commands in process at 40 and 200.
  for (const [cols, run] of [[40, onTerminalStream], [80, runOnPty], [200, onTerminalStream]] as const) {
    it(`${cols} columns${run === runOnPty ? ' on a pty' : ''}: card list, card get and schema`, async () => {
      const everyId = emu.state()[BOARD]!.cards.map((c) => c._id);
      expect(everyId).toHaveLength(42);
      for (const args of [['card', 'list'], ['card', 'get', ids[0]!], ['card', 'get', ids[1]!], ['schema']]) {
        const r = await run(args, env, { cols, rows: 100 });
        const what = `${args.join(' ')} at ${cols}:\n${plain(r.screen)}`;
        expect(r.code, what).toBe(0);
        const lines = tableLines(r.screen);
        expect(lines.length, what).toBeGreaterThan(3);
        for (const line of lines) expect(stringWidth(line), `${what}\n${line}`).toBeLessThanOrEqual(cols);
        if (args[1] === 'list') for (const id of everyId) expect(lines.some((l) => l.startsWith(`${id}  `)), `${id} ${what}`).toBe(true);
        if (args[1] === 'get') expect(lines.some((l) => /^_id  +/.test(l) && l.endsWith(` ${args[2]}`)), what).toBe(true);
        expect(plain(r.screen), what).not.toMatch(/[│┌├└]/);
      }
    });
  }
  it('columns left out are named on stderr with --fields; --fields shows them', async () => {
    const r = await runOnPty(['card', 'list'], env, { cols: 80, rows: 100 });
    expect(plain(r.screen)).toMatch(/\d+ columns not shown to fit the terminal \(.*\): choose columns with --fields/);
    const picked = await runOnPty(['card', 'list', '--fields', 'Field 30,担当者'], env, { cols: 80, rows: 100 });
    expect(tableLines(picked.screen)[0]).toMatch(/^_id +Field 30 +担当者$/);
  });
  it('card get --fields on a terminal: the field/value table of those fields, _id first; --format ndjson there is one line of JSON', async () => {
    const r = await runOnPty(['card', 'get', ids[1]!, '--fields', '担当者,Name'], env, { cols: 80, rows: 100 });
    expect(r.code, r.screen).toBe(0);
    expect(tableLines(r.screen).map((l) => l.replace(/ {2,}/g, '|'))).toEqual(['field|value', `_id|${ids[1]}`, '担当者|山田太郎', 'Name|Second']);
    const nd = await runOnPty(['card', 'get', ids[1]!, '--fields', 'Name', '--format', 'ndjson'], env, { cols: 80, rows: 100 });
    expect(plain(nd.screen).trim()).toBe(`{"_id":"${ids[1]}","Name":"Second"}`);
  });
  it('card get on a colour terminal at 40: the bold header is intact', async () => {
    const r = await runOnPty(['card', 'get', ids[1]!], { ...env, NO_COLOR: undefined }, { cols: 40, rows: 100 });
    expect(r.screen).toMatch(/(^|\n)\u001b\[1mfield\u001b\[22m +\u001b\[1mvalue\u001b\[22m\r\n/);
    expect(r.screen.match(/\u001b\[[0-9;]*m/g)?.every((c) => c === '\u001b[1m' || c === '\u001b[22m')).toBe(true);
  });
});

describe('the pager', () => {
  const paged = () => join(tempDir('cardboard-paged-'), 'paged.txt');
  it('long output on a terminal goes through CARDBOARD_PAGER; --no-pager and a pipe do not', async () => {
    const file = paged();
    const pager = `sh -c 'cat > ${file}'`;
    const r = await runOnPty(['card', 'list'], { ...env, CARDBOARD_PAGER: pager }, { cols: 80, rows: 20 });
    expect(r.code).toBe(0);
    expect(plain(r.screen)).not.toContain(`\n${ids[0]}  `);
    const text = readFileSync(file, 'utf8');
    expect(text).toContain(`\n${ids[0]}  `);
    expect(text.split('\n').length).toBeGreaterThan(40);

    const direct = paged();
    const noPager = await runOnPty(['--no-pager', 'card', 'list'], { ...env, CARDBOARD_PAGER: `sh -c 'cat > ${direct}'` }, { cols: 80, rows: 20 });
    expect(noPager.code).toBe(0);
    expect(plain(noPager.screen)).toContain(`\n${ids[0]}  `);
    expect(existsSync(direct)).toBe(false);

    const piped = await runCli(['card', 'list', '--format', 'table'], { env: { ...env, CARDBOARD_PAGER: `sh -c 'cat > ${direct}'` } });
    expect(piped.stdout).toContain(`${ids[0]}\t`);
    expect(existsSync(direct)).toBe(false);
  });
  it('output that fits the screen is printed directly', async () => {
    const file = paged();
    const r = await runOnPty(['card', 'get', ids[1]!], { ...env, CARDBOARD_PAGER: `sh -c 'cat > ${file}'` }, { cols: 80, rows: 60 });
    expect(plain(r.screen)).toContain(ids[1]);
    expect(existsSync(file)).toBe(false);
  });
  it('quitting the pager early (q) exits 0 with no message', async () => {
    // More than a pipe holds (~100 KB), so the pager quits before it has read everything.
    const big = await startTestEmulator({ seedCards: 1500, pageSize: 500 });
    try {
      const bigEnv = { CARDBOARD_BASE_URL: big.url, CARDBOARD_BOARD: 'b-test', CARDBOARD_TOKEN: 'tok-test-123', CARDBOARD_PAGER: 'head -n 3' };
      const r = await runOnPty(['card', 'list', '--all'], bigEnv, { cols: 200, rows: 10 });
      expect(r.code, plain(r.screen)).toBe(0);
      expect(plain(r.screen).split(/\r?\n/).filter((l) => l !== ''), plain(r.screen)).toHaveLength(3);
    } finally {
      await big.close();
    }
  });
  it('Ctrl-C while the pager runs is left to the pager: cardboard waits for it and exits 0', async () => {
    const file = paged();
    // The pager ignores SIGINT (as less does) and sends it to the whole process group, as the terminal would.
    const pager = `sh -c 'trap "" INT; kill -INT 0; cat > ${file}'`;
    const r = await runOnPty(['card', 'list'], { ...env, CARDBOARD_PAGER: pager }, { cols: 80, rows: 20 });
    expect(r.code, plain(r.screen)).toBe(0);
    // The whole table reached the pager: its last row is the board's last card.
    expect(readFileSync(file, 'utf8').trimEnd().split('\n').at(-1)).toMatch(new RegExp(`^${ids.at(-1)}  `));
  });
});
