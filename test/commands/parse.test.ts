import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { cardGetCommand } from '../../src/commands/card/get.js';
import { cardListCommand } from '../../src/commands/card/list.js';
import { parseDataObject, parsePairs } from '../../src/commands/card/pairs.js';
import { cardPutCommand } from '../../src/commands/card/put.js';
import { commentCommand } from '../../src/commands/comment/comment.js';
import { schemaCommand } from '../../src/commands/schema/schema.js';
import type { Context, ContextRef } from '../../src/context.js';
import { UsageError } from '../../src/errors.js';
import { testContext } from '../io/buffers.js';

type Builder<O> = (parent: Command, ctx: ContextRef, run: (ctx: Context, opts: O) => Promise<void>) => Command;

/** Parse argv through a builder whose run function only records the options. */
async function parseWith<O>(build: Builder<O>, argv: string[], noun?: string): Promise<O> {
  const { ctx } = testContext();
  const program = new Command('cardboard').exitOverride().configureOutput({ writeOut: () => {}, writeErr: () => {} });
  const parent = noun ? program.command(noun) : program;
  let seen: O | undefined;
  build(parent, () => ctx, async (_ctx, opts) => {
    seen = opts;
  });
  await program.parseAsync(noun ? [noun, ...argv] : argv, { from: 'user' });
  if (seen === undefined) throw new Error('run was not called');
  return seen;
}

describe('parsePairs', () => {
  it('splits at the first = (string) or := (JSON)', () => {
    expect(parsePairs(['Name=a=b', 'Priority:=3', 'Due Date=2024-05-01', 'Tags:=["x"]', 'Note=x:=y', 'Empty='])).toEqual({
      Name: 'a=b',
      Priority: 3,
      'Due Date': '2024-05-01',
      Tags: ['x'],
      Note: 'x:=y',
      Empty: '',
    });
  });
  it('rejects bad JSON naming the field, a missing =, an empty name and a repeated field', () => {
    expect(() => parsePairs(['Priority:=three'])).toThrow(/field 'Priority'/);
    expect(() => parsePairs(['Name'])).toThrow(UsageError);
    expect(() => parsePairs(['=x'])).toThrow(UsageError);
    expect(() => parsePairs([':=1'])).toThrow(UsageError);
    expect(() => parsePairs(['Name=a', 'Name=b'])).toThrow(/twice/);
  });
  it('parseDataObject accepts only a JSON object', () => {
    expect(parseDataObject('{"a":1}')).toEqual({ a: 1 });
    for (const bad of ['[1]', 'null', '"s"', '{']) expect(() => parseDataObject(bad)).toThrow(UsageError);
  });
});

describe('card put parsing', () => {
  it('collects pairs and flags into options', async () => {
    const opts = await parseWith(cardPutCommand, ['put', 'Name=x', 'Priority:=2', '--id', 'c1', '--data', '-', '--allow-unknown', '--json'], 'card');
    expect(opts).toEqual({ fields: { Name: 'x', Priority: 2 }, id: 'c1', data: '-', allowUnknown: true, json: true });
  });
  it('defaults the switches off', async () => {
    expect(await parseWith(cardPutCommand, ['put', 'Name=x'], 'card')).toEqual({
      fields: { Name: 'x' },
      id: undefined,
      data: undefined,
      allowUnknown: false,
      json: false,
    });
  });
  it('a bad := value is a UsageError before run', async () => {
    await expect(parseWith(cardPutCommand, ['put', 'Priority:=nope'], 'card')).rejects.toBeInstanceOf(UsageError);
  });
});

describe('card get parsing', () => {
  it('takes the id and --json (--format json)', async () => {
    expect(await parseWith(cardGetCommand, ['get', 'c1', '--json'], 'card')).toEqual({ cardId: 'c1', format: 'json', fields: undefined });
  });
  it('defaults to the automatic format; takes --format and --fields as card list does', async () => {
    expect(await parseWith(cardGetCommand, ['get', 'c1'], 'card')).toEqual({ cardId: 'c1', format: undefined, fields: undefined });
    const opts = await parseWith(cardGetCommand, ['get', 'c1', '--format', 'csv', '--fields', 'Name, Due Date', '--fields', 'Status'], 'card');
    expect(opts).toEqual({ cardId: 'c1', format: 'csv', fields: ['Name', 'Due Date', 'Status'] });
    await expect(parseWith(cardGetCommand, ['get', 'c1', '--json', '--format', 'ndjson'], 'card')).rejects.toBeInstanceOf(UsageError);
    await expect(parseWith(cardGetCommand, ['get', 'c1', '--format', 'xml'], 'card')).rejects.toMatchObject({ code: 'commander.invalidArgument' });
  });
  it('requires the id', async () => {
    await expect(parseWith(cardGetCommand, ['get'], 'card')).rejects.toMatchObject({ code: 'commander.missingArgument' });
  });
});

describe('card list parsing', () => {
  it('defaults to page 0 and the automatic format', async () => {
    expect(await parseWith(cardListCommand, ['list'], 'card')).toEqual({ page: 0, all: false, format: undefined, fields: undefined, limit: undefined });
  });
  it('parses every flag; --fields splits on commas, trims and accumulates', async () => {
    const opts = await parseWith(cardListCommand, ['list', '--all', '--format', 'csv', '--fields', 'Name, Due Date', '--fields', 'Status', '--limit', '5'], 'card');
    expect(opts).toEqual({ page: 0, all: true, format: 'csv', fields: ['Name', 'Due Date', 'Status'], limit: 5 });
  });
  it('rejects --page with --all', async () => {
    await expect(parseWith(cardListCommand, ['list', '--page', '2', '--all'], 'card')).rejects.toBeInstanceOf(UsageError);
  });
  it('--json is --format json; beside another --format it is a usage error', async () => {
    expect(await parseWith(cardListCommand, ['list', '--json'], 'card')).toMatchObject({ format: 'json' });
    expect(await parseWith(cardListCommand, ['list', '--json', '--format', 'json'], 'card')).toMatchObject({ format: 'json' });
    await expect(parseWith(cardListCommand, ['list', '--json', '--format', 'ndjson'], 'card')).rejects.toBeInstanceOf(UsageError);
  });
  it('rejects a bad page, limit or format', async () => {
    await expect(parseWith(cardListCommand, ['list', '--page', 'x'], 'card')).rejects.toBeInstanceOf(UsageError);
    await expect(parseWith(cardListCommand, ['list', '--limit', '0'], 'card')).rejects.toBeInstanceOf(UsageError);
    await expect(parseWith(cardListCommand, ['list', '--format', 'xml'], 'card')).rejects.toMatchObject({ code: 'commander.invalidArgument' });
    await expect(parseWith(cardListCommand, ['list', '--fields', ','], 'card')).rejects.toBeInstanceOf(UsageError);
  });
});

describe('card list --where and --mirror parsing', () => {
  it('--where is repeatable and reads every page unless --page is given', async () => {
    expect(await parseWith(cardListCommand, ['list', '--where', 'Status=Open', '--where', 'Priority>2'], 'card')).toMatchObject({ all: true, page: 0, where: ['Status=Open', 'Priority>2'] });
    expect(await parseWith(cardListCommand, ['list', '--where', 'Status=Open', '--page', '3'], 'card')).toMatchObject({ all: false, page: 3, where: ['Status=Open'] });
  });
  it('a --where without an operator is a usage error naming it', async () => {
    await expect(parseWith(cardListCommand, ['list', '--where', 'Status'], 'card')).rejects.toThrow("--where 'Status': it has no operator");
  });
  it('--mirror reads the whole mirror; --page with it is a usage error', async () => {
    expect(await parseWith(cardListCommand, ['list', '--mirror', '--limit', '3'], 'card')).toMatchObject({ all: true, mirror: true, limit: 3 });
    await expect(parseWith(cardListCommand, ['list', '--mirror', '--page', '1'], 'card')).rejects.toBeInstanceOf(UsageError);
  });
});

describe('schema parsing', () => {
  it('reads --json and --refresh', async () => {
    expect(await parseWith(schemaCommand, ['schema'])).toEqual({ json: false, refresh: false });
    expect(await parseWith(schemaCommand, ['schema', '--json', '--refresh'])).toEqual({ json: true, refresh: true });
  });
});

describe('comment parsing', () => {
  it('joins the words', async () => {
    expect(await parseWith(commentCommand, ['comment', 'c1', 'hello', 'world'])).toEqual({
      cardId: 'c1',
      text: 'hello world',
      file: undefined,
      stdin: false,
      json: false,
    });
  });
  it('- means stdin; --file a file', async () => {
    expect(await parseWith(commentCommand, ['comment', 'c1', '-', '--json'])).toMatchObject({ stdin: true, text: undefined, json: true });
    expect(await parseWith(commentCommand, ['comment', 'c1', '--file', 'n.md'])).toMatchObject({ file: 'n.md', text: undefined, stdin: false });
  });
  it('no text, or text and --file together, is a UsageError', async () => {
    await expect(parseWith(commentCommand, ['comment', 'c1'])).rejects.toBeInstanceOf(UsageError);
    await expect(parseWith(commentCommand, ['comment', 'c1', 'x', '--file', 'n.md'])).rejects.toBeInstanceOf(UsageError);
  });
});
