// Machine formats on a real pseudo-terminal: a card value holding a clipboard write (OSC 52), a clear-screen
// and a right-to-left override reaches the screen escaped in CSV, JSON and NDJSON, as in the table; piped,
// the same commands write the exact bytes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../helpers/cli.js';
import { type RunningEmulator, startTestEmulator } from '../helpers/emulator.js';
import { runOnPty } from '../helpers/pty.js';

const BOARD = 'b-escapes';
const TOKEN = 'tok-escapes-123';
const CLIPBOARD = '\u001b]52;c;cm0gLXJmIH4K\u0007';
const CLEAR = '\u001b[2J';
const RTL = 'evil\u202etxt.exe';
const C1 = 'csi\u009b31m';
const VALUE = `${CLIPBOARD}x${CLEAR}y${RTL}${C1}`;
/** A field name is the server's data too (schema --json). */
const FIELD = `Due${CLEAR}\u202eetaD`;

let emu: RunningEmulator;
let env: Record<string, string>;
let id: string;

beforeAll(async () => {
  emu = await startTestEmulator({ boards: { [BOARD]: { token: TOKEN, fields: ['Name', 'Status', FIELD] } } });
  const r = await fetch(`${emu.url}/api/aptlet/${BOARD}`, { method: 'POST', headers: { 'x-token': TOKEN, 'content-type': 'application/json' }, body: JSON.stringify({ Name: VALUE, Status: 'Open' }) });
  id = ((await r.json()) as { _id: string })._id;
  env = { CARDBOARD_BASE_URL: emu.url, CARDBOARD_BOARD: BOARD, CARDBOARD_TOKEN: TOKEN, CARDBOARD_CONFIG_DIR: tempDir(), NO_COLOR: '1' };
});
afterAll(async () => {
  await emu.close();
});

/** What a terminal would act on or hide, line breaks aside (the pty turns LF into CR LF). */
const RAW = /[\u0000-\u0009\u000b\u000c\u000e-\u001f\u007f-\u009f\u2028\u2029]|(?!\u200d)\p{Cf}/u;

describe('card data on a terminal in every format', () => {
  for (const args of [
    ['card', 'list', '--format', 'csv'],
    ['card', 'list', '--format', 'json'],
    ['card', 'list', '--format', 'ndjson'],
    ['card', 'list', '--all', '--json'],
  ]) {
    it(`${args.join(' ')}: no raw ESC, BEL, C1 or U+202E on the pty; piped, the exact value`, async () => {
      const r = await runOnPty(args, env, { cols: 200 });
      expect(r.code, r.screen).toBe(0);
      expect(r.screen).not.toMatch(RAW);
      expect(r.screen).toContain(id);
      if (args.includes('csv')) expect(r.screen).toContain('\\e]52;c;cm0gLXJmIH4K\\ax\\e[2Jyevil\\u202etxt.execsi\\x9b31m');
      else {
        // Still JSON: the escapes read back as the value itself.
        const text = r.screen.replace(/\r\n/g, '\n');
        const values = args.includes('ndjson') ? text.trim().split('\n').map((l) => JSON.parse(l) as { Name: string }) : (JSON.parse(text) as { Name: string }[]);
        expect(values.map((v) => v.Name)).toEqual([VALUE]);
      }
      const piped = await runCli(args, { env, spawn: true });
      expect(piped.code, piped.stderr).toBe(0);
      if (args.includes('csv')) expect(piped.stdout).toContain(`${id},${VALUE},Open,\r\n`);
      else expect(piped.stdout).toContain(JSON.stringify(VALUE));
    });
  }
  for (const args of [['card', 'get', '--json'], ['schema', '--json']]) {
    it(`${args.join(' ')}: escaped JSON on the pty`, async () => {
      const full = args[0] === 'card' ? [...args.slice(0, 2), id, ...args.slice(2)] : args;
      const r = await runOnPty(full, env, { cols: 200 });
      expect(r.code, r.screen).toBe(0);
      expect(r.screen).not.toMatch(RAW);
      const value = JSON.parse(r.screen.replace(/\r\n/g, '\n')) as { Name: string } | { name: string }[];
      if (args[0] === 'card') expect((value as { Name: string }).Name).toBe(VALUE);
      else expect((value as { name: string }[]).map((f) => f.name)).toContain(FIELD);
    });
  }
});
