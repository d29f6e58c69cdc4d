import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createContext } from '../../src/context.js';
import { createRecordWriter, defaultFormat } from '../../src/io/records.js';
import { testContext } from './buffers.js';

const CARDS = [
  { _id: 'c1', Name: 'One, with comma', Status: 'Open', Extra: 'x' },
  { _id: 'c2', Name: 'Two', Priority: 3 },
];
const COLUMNS = ['_id', 'Name', 'Status', 'Priority'];

async function writeAll(format: 'table' | 'json' | 'ndjson' | 'csv', opts: { tty?: boolean; project?: boolean; cards?: object[] } = {}) {
  const { ctx, stdout } = testContext({ tty: opts.tty });
  const writer = createRecordWriter(ctx, { format, columns: COLUMNS, project: opts.project });
  for (const card of opts.cards ?? CARDS) await writer.write(card as Record<string, unknown>);
  await writer.end();
  return stdout.text;
}

describe('createRecordWriter', () => {
  it('ndjson: one whole record per line', async () => {
    const text = await writeAll('ndjson');
    expect(text.split('\n').filter(Boolean).map((l) => JSON.parse(l))).toEqual(CARDS);
  });
  it('ndjson with project keeps only the columns', async () => {
    const text = await writeAll('ndjson', { project: true });
    expect(JSON.parse(text.split('\n')[0]!)).toEqual({ _id: 'c1', Name: 'One, with comma', Status: 'Open' });
  });
  it('json: one parseable array, also when empty', async () => {
    expect(JSON.parse(await writeAll('json'))).toEqual(CARDS);
    expect(await writeAll('json', { cards: [] })).toBe('[]\n');
  });
  it('json indented on a TTY: the array of JSON.stringify(records, null, 2), values intact (U+2028 and U+2029 too)', async () => {
    const { ctx, stdout } = testContext({ tty: true });
    const writer = createRecordWriter(ctx, { format: 'json', columns: [], indent: true });
    const cards = [...CARDS, { _id: 'c3', Name: 'line\u2028sep\u2029para' }];
    for (const card of cards) await writer.write(card);
    await writer.end();
    expect(JSON.parse(stdout.text)).toEqual(cards);
    expect(stdout.text).toBe(`${JSON.stringify(cards, null, 2).replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029')}\n`);
  });
  it('csv: header in column order, then RFC 4180 rows', async () => {
    expect(await writeAll('csv')).toBe('_id,Name,Status,Priority\r\nc1,"One, with comma",Open,\r\nc2,Two,,3\r\n');
    expect(await writeAll('csv', { cards: [] })).toBe('_id,Name,Status,Priority\r\n');
  });
  it('table piped: a header line and tab-separated rows', async () => {
    expect(await writeAll('table')).toBe('_id\tName\tStatus\tPriority\nc1\tOne, with comma\tOpen\t\nc2\tTwo\t\t3\n');
  });
  it('table on a TTY: a borderless table with every value', async () => {
    const text = await writeAll('table', { tty: true });
    expect(text).toBe('_id  Name             Status  Priority\nc1   One, with comma  Open\nc2   Two                      3\n');
    expect(text).not.toContain('\t');
    expect(text).not.toContain('\u001b[');
  });
  it('waits for drain on a slow stream and keeps the order', async () => {
    const seen: string[] = [];
    const slow = new Writable({
      highWaterMark: 1,
      write(chunk, _enc, done) {
        seen.push(chunk.toString());
        setTimeout(done, 1);
      },
    });
    const ctx = createContext({ stdout: slow, env: {} });
    const writer = createRecordWriter(ctx, { format: 'ndjson', columns: [] });
    // ~200 KB: several 64 KB chunks, each of which must wait for 'drain' on this 1-byte buffer.
    const n = 4000;
    for (let i = 0; i < n; i++) await writer.write({ _id: `c${i}`, Name: 'x'.repeat(30) });
    await writer.end();
    await new Promise((r) => slow.end(r));
    expect(seen.length).toBeGreaterThan(2);
    const lines = seen.join('').trimEnd().split('\n');
    expect(lines.map((l) => JSON.parse(l)._id)).toEqual(Array.from({ length: n }, (_, i) => `c${i}`));
  });
});

describe('defaultFormat', () => {
  it('is table on a TTY and ndjson piped', () => {
    expect(defaultFormat(testContext({ tty: true }).ctx)).toBe('table');
    expect(defaultFormat(testContext({ tty: false }).ctx)).toBe('ndjson');
  });
});
