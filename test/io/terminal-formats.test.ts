// Machine formats written to a terminal: JSON keeps being JSON with its DEL, C1, separator and bidi characters
// as \uXXXX escapes; CSV cells get the table's visible escapes. On a pipe the bytes are exact.
import { describe, expect, it } from 'vitest';
import { createRecordWriter } from '../../src/io/records.js';
import { jsonFor, terminalJson } from '../../src/io/terminal-json.js';
import { writeJson } from '../../src/io/write.js';
import { testContext } from './buffers.js';

const HOSTILE = `a\u001b]52;c;Zm9v\u0007b\u001b[2Jc\u202ed\u009be\u007ff\u2028g\u2066h\u061ci\u200ej\u{e0001}k`;
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029]|(?!\u200d)\p{Cf}/u;
const CARD = { _id: `id\u202e1`, Name: HOSTILE, [`key\u001b[1A`]: 'v' };

async function written(format: 'json' | 'ndjson' | 'csv', tty: boolean): Promise<string> {
  const { ctx, stdout } = testContext({ tty });
  const writer = createRecordWriter(ctx, { format, columns: ['_id', 'Name'] });
  await writer.write(CARD);
  await writer.end();
  return stdout.text;
}

describe('terminalJson', () => {
  it('escapes what JSON.stringify leaves raw, and reads back as the same value', () => {
    const text = terminalJson(JSON.stringify(CARD, null, 2));
    expect(text.replace(/\n/g, '')).not.toMatch(RAW);
    expect(text).toContain('\\u202e');
    expect(text).toContain('\\u009b');
    expect(text).toContain('\\udb40\\udc01');
    expect(JSON.parse(text)).toEqual(CARD);
  });
  it('keeps the emoji joiner and plain text as they are', () => {
    const family = JSON.stringify('👩‍👩‍👧 ok');
    expect(terminalJson(family)).toBe(family);
  });
  it('jsonFor: exact on a pipe', () => {
    const text = JSON.stringify(CARD);
    expect(jsonFor({ isTTY: false }, text)).toBe(text);
    expect(jsonFor({ isTTY: true }, text)).not.toBe(text);
  });
});

describe('record writers on a terminal and on a pipe', () => {
  for (const format of ['json', 'ndjson'] as const) {
    it(`${format}: escaped on a terminal, still the same records; exact when piped`, async () => {
      const tty = await written(format, true);
      expect(tty.replace(/\n/g, '')).not.toMatch(RAW);
      const values = format === 'json' ? (JSON.parse(tty) as unknown[]) : tty.trim().split('\n').map((l) => JSON.parse(l) as unknown);
      expect(values).toEqual([CARD]);
      const piped = await written(format, false);
      expect(piped).toContain(JSON.stringify(CARD));
    });
  }
  it('csv: the table escapes on a terminal, exact bytes piped', async () => {
    const tty = await written('csv', true);
    expect(tty.replace(/\r\n/g, '')).not.toMatch(RAW);
    expect(tty).toBe('_id,Name\r\nid\\u202e1,a\\e]52;c;Zm9v\\ab\\e[2Jc\\u202ed\\x9be\\x7ff\\u2028g\\u2066h\\u061ci\\u200ej\\u{e0001}k\r\n');
    expect(await written('csv', false)).toBe(`_id,Name\r\nid\u202e1,${HOSTILE}\r\n`);
  });
  it('writeJson (card get, schema, comment --json): escaped on a terminal only', async () => {
    for (const tty of [true, false]) {
      const { ctx, stdout } = testContext({ tty });
      await writeJson(ctx.stdout, CARD);
      expect(JSON.parse(stdout.text)).toEqual(CARD);
      if (tty) expect(stdout.text.replace(/\n/g, '')).not.toMatch(RAW);
      else expect(stdout.text).toBe(`${JSON.stringify(CARD, null, 2)}\n`);
    }
  });
});
