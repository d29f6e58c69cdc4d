// Parse tests of `cardboard import`: the command turns its flags into one ImportPlan and hands it to a
// spy run function; bad values and combinations are UsageErrors before anything is opened or sent.
import { Command } from 'commander';
import { describe, expect, it, vi } from 'vitest';
import { importCommand } from '../../src/commands/import/import.js';
import type { Context } from '../../src/context.js';
import { UsageError } from '../../src/errors.js';
import { type ImportPlan, sendsEmpty } from '../../src/import/plan.js';
import { testContext } from '../io/buffers.js';

/** Parse `cardboard import ...argv` with a run function that only records the plan. */
async function planOf(...argv: string[]): Promise<ImportPlan> {
  const { ctx } = testContext();
  const program = new Command('cardboard').exitOverride().configureOutput({ writeOut: () => {}, writeErr: () => {} });
  const run = vi.fn(async (_ctx: Context, _plan: ImportPlan) => {});
  importCommand(program, () => ctx, run);
  await program.parseAsync(['import', ...argv], { from: 'user' });
  expect(run).toHaveBeenCalledTimes(1);
  return run.mock.calls[0]![1];
}

describe('import: flags → plan', () => {
  it('every flag lands in its part of the plan', async () => {
    const plan = await planOf(
      'cards.tsv',
      ...['--map', 'Who=Owner', '--map', 'A=b=Name', '--map-file', 'm.json', '--skip-column', 'Notes', '--allow-unknown'],
      ...['--id-column', 'Key', '--match-on', 'Name', '--type', 'Points=number', '--type', 'Done=boolean'],
      ...['--delimiter', ';', '--encoding', 'latin1'],
      ...['--results', 'r.csv', '--rejects', 'x.csv', '--journal', 'j.log', '--json'],
      ...['--concurrency', '3', '--give-up-after', '1h', '--force', '--restart', '--empty', 'send', '--dry-run'],
    );
    expect(plan).toEqual({
      source: { file: 'cards.tsv', format: 'tsv', formatGiven: undefined, delimiter: ';', encoding: 'latin1' },
      mapping: { map: { Who: 'Owner', 'A=b': 'Name' }, mapFile: 'm.json', skipColumns: ['Notes'], allowUnknown: true },
      key: { idColumn: 'Key', matchOn: 'Name' },
      types: new Map([
        ['Points', 'number'],
        ['Done', 'boolean'],
      ]),
      outputs: { results: 'r.csv', rejects: 'x.csv', journal: 'j.log', json: true },
      policy: { concurrency: 3, giveUpAfterMs: 3_600_000, force: true, restart: true, again: false, sendEmpty: true, dryRun: true },
    });
    // A header is data: the map is a null-prototype record.
    expect(Object.getPrototypeOf(plan.mapping.map)).toBeNull();
  });

  it('the defaults: CSV by extension, 8 at once, 15 minutes of 429s, empty cells omitted, nothing written but the board', async () => {
    const plan = await planOf('cards.csv');
    expect(plan).toEqual({
      source: { file: 'cards.csv', format: 'csv', formatGiven: undefined, delimiter: undefined, encoding: undefined },
      mapping: { map: {}, mapFile: undefined, skipColumns: [], allowUnknown: false },
      key: { idColumn: undefined, matchOn: undefined },
      types: new Map(),
      outputs: { results: undefined, rejects: undefined, journal: undefined, json: false },
      policy: { concurrency: 1, giveUpAfterMs: 900_000, force: false, restart: false, again: false, sendEmpty: false, dryRun: false },
    });
    expect(sendsEmpty(plan)).toBe(false);
  });

  it('the format: --input-format wins over the extension (jsonl is ndjson), stdin is CSV; JSON input sends empty values', async () => {
    expect((await planOf('cards.jsonl')).source).toMatchObject({ format: 'ndjson', formatGiven: undefined });
    expect((await planOf('cards.json')).source.format).toBe('json');
    expect((await planOf('-')).source.format).toBe('csv');
    const given = await planOf('-', '--input-format', 'JSONL');
    expect(given.source).toMatchObject({ file: '-', format: 'ndjson', formatGiven: 'ndjson' });
    expect(given.policy.sendEmpty).toBe(false);
    expect(sendsEmpty(given)).toBe(true);
    expect((await planOf('data.txt', '--input-format', 'tsv')).source).toMatchObject({ format: 'tsv', formatGiven: 'tsv' });
  });

  it.each([
    [['cards.json', '--type', 'N=number'], /^--type applies to CSV input; cards\.json is read as json\.$/],
    [['cards.ndjson', '--delimiter', ';'], /^--delimiter applies to CSV input/],
    [['-', '--input-format', 'ndjson', '--encoding', 'latin1'], /^--encoding applies to CSV input; - is read as ndjson/],
    [['-', '--input-format', 'json'], /^A JSON array is read from a file, not stdin\.$/],
    [['-', '--restart'], /^--restart has no journal to ignore/],
    [['-', '--again'], /^--again has no journal to forget/],
    [['a.csv', '--again', '--restart'], /^--again and --restart cannot be used together/],
    [['cards.csv', '--input-format', 'xml'], /^Invalid --input-format 'xml'/],
    [['cards.csv', '--type', 'N=float'], /^Invalid --type 'N=float'/],
    [['cards.csv', '--concurrency', '0'], /--concurrency/],
    [['cards.csv', '--map', 'NoEquals'], /^Invalid --map 'NoEquals'/],
  ])('refuses %j before anything is opened (exit 2)', async (argv, message) => {
    const err = await planOf(...argv).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as UsageError).message).toMatch(message);
    expect((err as UsageError).exitCode).toBe(2);
  });

  it('UTF-8 named for JSON input is no conflict', async () => {
    expect((await planOf('cards.ndjson', '--encoding', 'utf-8')).source).toMatchObject({ format: 'ndjson', encoding: 'utf-8' });
  });
});
