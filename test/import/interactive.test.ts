import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { runImport } from '../../src/commands/import/execute.js';
import { type Choice, fieldChoices, type Prompter, previewAndSave, sampleText } from '../../src/commands/import/interactive.js';
import { planFromFlags } from '../../src/commands/import/plan-from-flags.js';
import { CancelledError } from '../../src/errors.js';
import type { ColumnMapping } from '../../src/import/types.js';
import { answer } from '../../src/io/prompt.js';
import { tempDir } from '../helpers/cli.js';
import { BOARD_ID, type RunningEmulator, startTestEmulator } from '../helpers/emulator.js';
import { testContext } from '../io/buffers.js';

let emu: RunningEmulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

/** A prompter that answers from a script and records every question with the choices offered. */
function scripted(answers: { confirm: boolean[]; select: string[]; input: string[] }) {
  const asked: string[] = [];
  const prompter: Prompter = {
    async select<T>(message: string, choices: Choice<T>[], defaultValue?: T) {
      const preset = choices.find((c) => c.value === defaultValue)?.name ?? choices[0]?.name;
      asked.push(`${message} [${choices.map((c) => c.name).join(' | ')}] default: ${preset}`);
      const want = answers.select.shift();
      const choice = choices.find((c) => c.name.startsWith(want ?? '\u0000'));
      if (!choice) throw new Error(`no choice ${want}`);
      return choice.value;
    },
    async confirm(message: string) {
      asked.push(message);
      return answers.confirm.shift() ?? false;
    },
    async input(message: string) {
      asked.push(message);
      return answers.input.shift() ?? '';
    },
  };
  return { prompter, asked };
}

function demoCopy(): string {
  const file = join(tempDir(), 'demo-cards.csv');
  copyFileSync(fileURLToPath(new URL('../../fixtures/demo-cards.csv', import.meta.url)), file);
  return file;
}

describe('import: interactive mapping (scripted prompter)', () => {
  it('asks for the unmapped header with the fields closest first, previews, saves a --map-file that works next time', async () => {
    emu = await startTestEmulator();
    const env = { CARDBOARD_BASE_URL: emu.url, CARDBOARD_BOARD: BOARD_ID, CARDBOARD_TOKEN: emu.boards[BOARD_ID]!.token, CARDBOARD_CONFIG_DIR: tempDir() };
    const file = demoCopy();
    const mapPath = join(tempDir(), 'demo.map.json');
    const { prompter, asked } = scripted({ confirm: [false, true, true], select: ['Owner'], input: [mapPath] });
    const { ctx, stderr } = testContext({ env });
    await runImport(ctx, planFromFlags(file, { map: [], skipColumn: [], concurrency: '4', empty: 'omit' }), { prompter });

    expect(asked[0]).toBe('1 column matches no field. Does this board have Create Fields on (so a column may become a new field)?');
    // Name, Status and Priority are taken by their own columns: only Owner is offered, then skip.
    // No field is close to Assignee: Enter skips it. Two sample values of the column are shown, JSON-quoted.
    expect(asked[1]).toBe('CSV column "Assignee" (e.g. "Alice Martin", "Bruno Costa") goes to which field? [Owner | skip this column] default: skip this column');
    expect(asked.slice(2)).toEqual(['Start the import with this mapping?', 'Save this mapping for the next run (--map-file)?', 'Save the mapping as']);
    expect(stderr.text).toContain('First rows as they will be sent:\n  {"Name":"Fix login redirect loop","Status":"Open","Owner":"Alice Martin","Priority":"High"}');
    expect(JSON.parse(readFileSync(mapPath, 'utf8'))).toEqual({ Name: 'Name', Status: 'Status', Assignee: 'Owner', Priority: 'Priority' });
    expect(stderr.text).toContain(`Next time: cardboard import ${file} --map-file ${mapPath}`);
    expect(emu.state()[BOARD_ID]!.cards).toHaveLength(25);
    expect(emu.state()[BOARD_ID]!.cards[0]!.Owner).toBe('Alice Martin');

    // The saved file maps without any prompt (CI-style context, no prompter).
    await emu.close();
    emu = await startTestEmulator();
    const next = testContext({ env: { ...env, CARDBOARD_BASE_URL: emu.url, CI: '1' } });
    await runImport(next.ctx, planFromFlags(demoCopy(), { map: [], skipColumn: [], mapFile: mapPath, concurrency: '4', empty: 'omit' }));
    expect(emu.state()[BOARD_ID]!.cards).toHaveLength(25);
  });

  it('offers a new field when the user says Create Fields is on, and sends nothing when the preview is declined', async () => {
    emu = await startTestEmulator();
    const env = { CARDBOARD_BASE_URL: emu.url, CARDBOARD_BOARD: BOARD_ID, CARDBOARD_TOKEN: emu.boards[BOARD_ID]!.token, CARDBOARD_CONFIG_DIR: tempDir() };
    const { prompter, asked } = scripted({ confirm: [true, false], select: ["new field 'Assignee'"], input: [] });
    const { ctx } = testContext({ env });
    const run = runImport(ctx, planFromFlags(demoCopy(), { map: [], skipColumn: [], concurrency: '4', empty: 'omit' }), { prompter });
    await expect(run).rejects.toBeInstanceOf(CancelledError);
    expect(asked[1]).toContain("new field 'Assignee' (Create Fields is on)");
    expect(emu.requests().filter((r) => r.method === 'POST')).toEqual([]);
  });

  it('NDJSON input: the questions name NDJSON keys, not CSV columns', async () => {
    emu = await startTestEmulator();
    const env = { CARDBOARD_BASE_URL: emu.url, CARDBOARD_BOARD: BOARD_ID, CARDBOARD_TOKEN: emu.boards[BOARD_ID]!.token, CARDBOARD_CONFIG_DIR: tempDir() };
    const file = join(tempDir(), 'cards.ndjson');
    writeFileSync(file, `${JSON.stringify({ Name: 'a', Who: 'Ada' })}\n`);
    const { prompter, asked } = scripted({ confirm: [false, false], select: ['Owner'], input: [] });
    const { ctx } = testContext({ env });
    await runImport(ctx, planFromFlags(file, { map: [], skipColumn: [], concurrency: '4', empty: 'omit', dryRun: true }), { prompter });
    expect(asked[0]).toBe('1 key matches no field. Does this board have Create Fields on (so a key may become a new field)?');
    expect(asked[1]).toBe('NDJSON key "Who" (e.g. "Ada") goes to which field? [Owner | Status | Priority | skip this key] default: skip this key');
  });

  it('never prompts without a terminal: the unmapped header is a usage error', async () => {
    emu = await startTestEmulator();
    const env = { CARDBOARD_BASE_URL: emu.url, CARDBOARD_BOARD: BOARD_ID, CARDBOARD_TOKEN: emu.boards[BOARD_ID]!.token, CARDBOARD_CONFIG_DIR: tempDir() };
    const { ctx } = testContext({ env, tty: true });
    await expect(runImport(ctx, planFromFlags(demoCopy(), { map: [], skipColumn: [], concurrency: '4', empty: 'omit' }))).rejects.toThrow(/column 'Assignee'/);
    expect(emu.requests().filter((r) => r.method === 'POST')).toEqual([]);
  });
});

describe('import: prompts', () => {
  it('--dry-run asks the mapping but never asks to start; nothing is sent', async () => {
    emu = await startTestEmulator();
    const env = { CARDBOARD_BASE_URL: emu.url, CARDBOARD_BOARD: BOARD_ID, CARDBOARD_TOKEN: emu.boards[BOARD_ID]!.token, CARDBOARD_CONFIG_DIR: tempDir() };
    const { prompter, asked } = scripted({ confirm: [false, false], select: ['Owner'], input: [] });
    const { ctx, stdout } = testContext({ env });
    await runImport(ctx, planFromFlags(demoCopy(), { map: [], skipColumn: [], concurrency: '4', empty: 'omit', dryRun: true }), { prompter });
    expect(asked.some((q) => q.startsWith('Start the import'))).toBe(false);
    expect(stdout.text).toContain('Assignee -> Owner   [prompt]');
    expect(emu.requests().filter((r) => r.method === 'POST')).toEqual([]);
  });

  it('a column with a close field offers it as the default; samples never carry raw control characters', () => {
    const choices = fieldChoices({ header: 'status', index: 1, suggestion: 'Status' }, ['Name', 'Status'], new Set(['Name']), false);
    expect(choices[0]).toMatchObject({ name: 'Status  (closest)', value: { kind: 'field', field: 'Status' } });
    // The one escape spelling of every line for a person (`\e`, `\a`), not JSON's `\u001b`.
    expect(sampleText([['a', '\u001b]0;pwned\u0007'], ['b', 'x']], 1)).toBe(' (e.g. "\\e]0;pwned\\a", "x")');
    // Cut at 40 columns between clusters: never half of a surrogate pair.
    expect(sampleText([['a', `${'x'.repeat(37)}😀😀`]], 1)).toBe(` (e.g. "${'x'.repeat(37)}…)`);
    expect(sampleText([['a', ''], ['b']], 1)).toBe(' (empty in the first rows)');
  });

  it('Ctrl-C at a prompt is an interruption (exit 130, "Interrupted."), whatever the prompt', async () => {
    // Ctrl-C typed (a key on the raw terminal) names the SIGINT the run ends by; an aborted prompt was
    // stopped by a signal the run received itself, which main already knows.
    for (const [name, signal] of [['ExitPromptError', 'SIGINT'], ['AbortPromptError', undefined]] as const) {
      const quit = Object.assign(new Error('User force closed the prompt with SIGINT'), { name });
      const err = await answer(Promise.reject(quit)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(CancelledError);
      expect(err).toMatchObject({ message: 'Interrupted.', exitCode: 130 });
      expect((err as CancelledError).signal).toBe(signal);
    }
    await expect(answer(Promise.reject(new TypeError('other')))).rejects.toBeInstanceOf(TypeError);
    await expect(answer(Promise.resolve(3))).resolves.toBe(3);
  });
});

describe('import: saving the mapping', () => {
  it('a path it cannot create is a usage error naming it (exit 2), before anything is sent', async () => {
    const missing = join(tempDir(), 'no-such-dir', 'in.map.json');
    const { prompter } = scripted({ confirm: [true, true], select: [], input: [missing] });
    const columns: ColumnMapping[] = [{ header: 'Title', index: 0, target: { kind: 'field', field: 'Name' }, how: 'prompt' }];
    const saving = previewAndSave(testContext().ctx, prompter, columns, [['a title']], 'in.csv', false);
    await expect(saving).rejects.toMatchObject({
      exitCode: 2,
      message: `Cannot save the mapping to ${missing}: no such file or directory (ENOENT).`,
      hint: expect.stringMatching(/writable directory.*nothing was sent/) as unknown,
    });
  });
});

describe('import: option parsing', () => {
  it('turns flags into a plan and refuses bad values', () => {
    const o = planFromFlags('x.csv', { map: ['A=B', 'C=D=E'], skipColumn: ['Z'], concurrency: '3', empty: 'send' });
    expect(o).toMatchObject({ mapping: { map: { A: 'B', 'C=D': 'E' }, skipColumns: ['Z'] }, policy: { concurrency: 3, sendEmpty: true } });
    expect(() => planFromFlags('x.csv', { map: [], skipColumn: [], concurrency: '0', empty: 'omit' })).toThrow(/--concurrency/);
    expect(() => planFromFlags('x.csv', { map: [], skipColumn: [], concurrency: '2', empty: 'maybe' })).toThrow(/--empty/);
    expect(() => planFromFlags('x.csv', { map: ['NoEquals'], skipColumn: [], concurrency: '2', empty: 'omit' })).toThrow(/--map/);
  });
});
