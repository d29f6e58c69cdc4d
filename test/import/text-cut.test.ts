// Rejected rows quote what was wrong, cut by the one shortening (io/width.ts shorten): between grapheme
// clusters, so a reason never holds half of a surrogate pair (raw, or as JSON's `\ud83d`).
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { RecordFramer } from '../../src/import/csv-frame.js';
import { readNdjson } from '../../src/import/json-source.js';
import { typedCell } from '../../src/import/mapping.js';

const LONE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]|\\ud8[0-9a-f]{2}/;

describe('reasons of rejected rows', () => {
  it('a cell that is not a number: the value cut at 60 columns between clusters', () => {
    const column = { header: 'n', index: 0, target: { kind: 'field', field: 'N' }, how: '--map', type: 'number' } as const;
    expect(() => typedCell(column, `${'x'.repeat(59)}😀😀`)).toThrow(`column 'n': "${'x'.repeat(59)}…" is not a number (--type number)`);
    try {
      typedCell(column, `${'x'.repeat(59)}😀😀`);
    } catch (err) {
      expect((err as Error).message).not.toMatch(LONE);
    }
  });
  it('an NDJSON line that is not an object: cut at 200 columns between clusters', async () => {
    const line = `[${'1,'.repeat(98)}"😀😀"]`;
    const items = [];
    for await (const item of readNdjson(Readable.from([Buffer.from(`{"a":1}\n${line}\n`)]))) items.push(item);
    const bad = items.find((i) => i.kind === 'bad') as { reason: string } | undefined;
    expect(bad?.reason).toBe(`not a JSON object: ${line.slice(0, 198)}…`);
    expect(bad?.reason).not.toMatch(LONE);
  });
  it('a CSV record never closed: its line kept to 2,000 columns between clusters', () => {
    const framer = new RecordFramer(',', 1_000_000);
    const text = `"${'x'.repeat(1998)}😀😀`;
    const frames = [...framer.push(`${text}\n`), ...framer.end()];
    const bad = frames.find((f) => f.kind === 'bad') as { reason: string } | undefined;
    expect(bad?.reason).toContain(`${JSON.stringify(`"${'x'.repeat(1998)}…`)}`);
    expect(bad?.reason).not.toMatch(LONE);
  });
});
