// Input read as written, whatever its line breaks: CRLF, LF and CR in any mix within one file, each one line
// break. csv-parse alone fixes the first line's break: a CRLF header with LF rows merged the rows
// into one value, an LF header with CRLF rows left `\r` on the last value. Every reader of the input splits
// by one rule (src/import/lines.ts): the CSV and TSV reader, the delimiter detection, the pre-scan's record
// count and bad-UTF-8 line, and the NDJSON reader. Values and starting lines are checked, in every chunking.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ndjsonKeys, readNdjson } from '../../src/import/json-source.js';
import { scanFile } from '../../src/import/scan.js';
import { readCsv } from '../../src/import/source.js';
import type { CsvItem } from '../../src/import/types.js';
import { tempDir } from '../helpers/cli.js';
import { readAll } from './read-csv.js';

const BREAK = /\r\n|\n|\r/g;
/** Whole, and in chunks small enough that every CRLF is split somewhere (1 byte: all of them). */
const CHUNKS = [undefined, 1, 2, 3, 5, 7];

/** Items as [kind, line, values | headers | reason]: one comparison shows everything that differs. */
function view(items: CsvItem[]): [string, number, unknown][] {
  return items.map((i) => [i.kind, i.line, i.kind === 'header' ? i.headers : i.kind === 'row' ? i.values : (i as { reason: string }).reason]);
}

/** The same items read whole and in every chunk size of CHUNKS. */
async function readEvery(text: string | Buffer, opts: { delimiter?: string; encoding?: string } = {}): Promise<[string, number, unknown][]> {
  const first = view(await readAll(text, opts));
  for (const chunk of CHUNKS.slice(1)) expect(view(await readAll(text, { ...opts, chunk })), `chunks of ${chunk}`).toEqual(first);
  return first;
}

function file(content: string | Buffer, name = 'in.csv'): string {
  const path = join(tempDir(), name);
  writeFileSync(path, content);
  return path;
}

describe('CSV records end at CRLF, LF or CR, in any mix', () => {
  it('a CRLF header with LF rows: one row per line, not one value holding them all', async () => {
    expect(await readEvery('Name\r\nsolo-a\nsolo-b\nsolo-c\n')).toEqual([
      ['header', 1, ['Name']],
      ['row', 2, ['solo-a']],
      ['row', 3, ['solo-b']],
      ['row', 4, ['solo-c']],
    ]);
    expect(await readEvery('Name,Status\r\nsolo-a,Open\nsolo-b,Done\n')).toEqual([
      ['header', 1, ['Name', 'Status']],
      ['row', 2, ['solo-a', 'Open']],
      ['row', 3, ['solo-b', 'Done']],
    ]);
  });

  it('an LF header with CRLF rows: no CR left on the last value', async () => {
    expect(await readEvery('Name,Status\nrow-a,Open\r\nrow-b,Done\r\n')).toEqual([
      ['header', 1, ['Name', 'Status']],
      ['row', 2, ['row-a', 'Open']],
      ['row', 3, ['row-b', 'Done']],
    ]);
  });

  it('lone CRs (old Mac), with and without a final one', async () => {
    const rows = [
      ['header', 1, ['Name', 'Status']],
      ['row', 2, ['mac-a', 'Open']],
      ['row', 3, ['mac-b', 'Done']],
    ];
    expect(await readEvery('Name,Status\rmac-a,Open\rmac-b,Done\r')).toEqual(rows);
    expect(await readEvery('Name,Status\rmac-a,Open\rmac-b,Done')).toEqual(rows);
  });

  it('CR and LF alternating; LF then CR is two breaks (a blank line), CR then LF is one', async () => {
    expect(await readEvery('a,b\r1,2\n3,4\r5,6\n7,8')).toEqual([
      ['header', 1, ['a', 'b']],
      ['row', 2, ['1', '2']],
      ['row', 3, ['3', '4']],
      ['row', 4, ['5', '6']],
      ['row', 5, ['7', '8']],
    ]);
    expect(await readEvery('a,b\n\r1,2\r\n3,4')).toEqual([
      ['header', 1, ['a', 'b']],
      ['row', 3, ['1', '2']],
      ['row', 4, ['3', '4']],
    ]);
  });

  it('a CRLF split across two chunks is one break; a CR ending a chunk before other text, or the input, is one too', async () => {
    const chunks = async (...parts: string[]) => {
      const out: CsvItem[] = [];
      for await (const item of readCsv(Readable.from(parts.map((p) => Buffer.from(p))))) out.push(item);
      return view(out);
    };
    const want = [
      ['header', 1, ['a', 'b']],
      ['row', 2, ['1', '2']],
      ['row', 3, ['3', '4']],
    ];
    expect(await chunks('a,b\r', '\n1,2\r', '\n3,4\r', '\n')).toEqual(want);
    expect(await chunks('a,b\r', '1,2\r', '3,4\r')).toEqual(want);
    expect(await chunks('a,b\r\n1,2\r', '\r\n3,4')).toEqual([
      ['header', 1, ['a', 'b']],
      ['row', 2, ['1', '2']],
      ['row', 4, ['3', '4']],
    ]);
  });

  it('quoted fields keep CRLF, LF and CR exactly as written; the record takes the line it starts on', async () => {
    const text = 'k,v\n"a\r\nb",1\r"c\rd",2\r\n"e\nf",3\n"g\r",4\r"\rh\n",5\r\n"x\r"\r\n"\r\n"\n';
    expect(await readEvery(text)).toEqual([
      ['header', 1, ['k', 'v']],
      ['row', 2, ['a\r\nb', '1']],
      ['row', 4, ['c\rd', '2']],
      ['row', 6, ['e\nf', '3']],
      ['row', 8, ['g\r', '4']],
      ['row', 10, ['\rh\n', '5']],
      ['bad', 13, 'expected 2 fields, found 1'],
      ['bad', 15, 'expected 2 fields, found 1'],
    ]);
    // The two one-field records above are rejected, their values intact too.
    const items = await readAll(text, { chunk: 1 });
    expect(items.slice(-2).map((i) => (i as { values: string[] }).values)).toEqual([['x\r'], ['\r\n']]);
  });

  it('the last record with and without a final line break, in each style', async () => {
    for (const eol of ['\n', '\r\n', '\r']) {
      const want = [
        ['header', 1, ['a', 'b']],
        ['row', 2, ['1', '2']],
        ['row', 3, ['3', '']],
      ];
      expect(await readEvery(`a,b${eol}1,2${eol}3,`)).toEqual(want);
      expect(await readEvery(`a,b${eol}1,2${eol}3,${eol}`)).toEqual(want);
      expect(await readEvery(`a,b${eol}1,2${eol}"3",""${eol}`)).toEqual(want);
      expect(await readEvery(`a,b${eol}1,2${eol}"3",""`)).toEqual(want);
    }
  });

  it('blank lines in each style are skipped and counted', async () => {
    // line 1 header, 2 blank (LF), 3, 4 blank (CRLF), 5, 6 blank (CR), 7, 8 blank (CRLF), 9 blank (CR), 10.
    expect(await readEvery('a,b\n\n1,2\r\n\r\n3,4\r\r5,6\n\r\n\r7,8')).toEqual([
      ['header', 1, ['a', 'b']],
      ['row', 3, ['1', '2']],
      ['row', 5, ['3', '4']],
      ['row', 7, ['5', '6']],
      ['row', 10, ['7', '8']],
    ]);
  });

  it('rejected records keep their starting lines in a mixed file; an unclosed quote costs its own line only', async () => {
    expect(await readEvery('a,b\r\nonly\n"q\r\nz",4\r"open,1\r2,3\r\nq,4\n')).toEqual([
      ['header', 1, ['a', 'b']],
      ['bad', 2, 'expected 2 fields, found 1'],
      ['row', 3, ['q\r\nz', '4']],
      ['bad', 5, 'unclosed quote: the record never ends: line 5 could not be read as a record: "\\"open,1"'],
      ['row', 6, ['2', '3']],
      ['row', 7, ['q', '4']],
    ]);
  });

  it('a line over the size limit whose CRLF is split across chunks counts as one line', async () => {
    const head = 'Name,Status\r\na,1\r\n';
    const long = `b,${'x'.repeat(1_100_000)}`;
    const text = `${head}${long}\r\nc,3\r\nd,4\r`;
    // The first chunk ends with the long line's CR, the next starts with its LF.
    const items = await readAll(text, { chunk: head.length + long.length + 1 });
    expect(view(items)).toEqual([
      ['header', 1, ['Name', 'Status']],
      ['row', 2, ['a', '1']],
      ['bad', 3, 'line 3 is over 1,000,000 characters; not read'],
      ['row', 4, ['c', '3']],
      ['row', 5, ['d', '4']],
    ]);
  });

  it('TSV, semicolons and a detected delimiter read the same; so does UTF-16 cut inside its code units', async () => {
    const want = [
      ['header', 1, ['Name', 'Status']],
      ['row', 2, ['t-a', 'Open']],
      ['row', 3, ['t-b', 'Do\r\nne']],
      ['row', 5, ['t-c', 'x']],
    ];
    const tsv = 'Name\tStatus\r\nt-a\tOpen\nt-b\t"Do\r\nne"\rt-c\tx\r';
    expect(await readEvery(tsv, { delimiter: '\t' })).toEqual(want);
    expect(await readEvery(tsv)).toEqual(want);
    expect(await readEvery(tsv.replaceAll('\t', ';'))).toEqual(want);
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(tsv.replaceAll('\t', ','), 'utf16le')]);
    expect(await readEvery(utf16, { encoding: 'utf-16le' })).toEqual(want);
  });

  it('random records with random line breaks per record, quoted breaks inside values, blank lines: read back equal, at their lines', async () => {
    const eol = fc.constantFrom('\n', '\r\n', '\r');
    const value = fc.string({ unit: fc.constantFrom('a', 'Z', 'é', '😀', ' ', ',', ';', '\t', '"', '\r', '\n', '\r\n'), maxLength: 6 });
    const scenario = fc.integer({ min: 2, max: 4 }).chain((cols) =>
      fc.record({
        cols: fc.constant(cols),
        delimiter: fc.constantFrom(',', ';', '\t'),
        headerEol: eol,
        records: fc.array(
          fc.record({ values: fc.array(fc.record({ text: value, quote: fc.boolean() }), { minLength: cols, maxLength: cols }), eol, blanks: fc.array(eol, { maxLength: 2 }) }),
          { maxLength: 12 },
        ),
        lastEol: fc.boolean(),
        chunk: fc.integer({ min: 1, max: 40 }),
      }),
    );
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const headers = Array.from({ length: s.cols }, (_, i) => `h${i}`);
        let text = headers.join(s.delimiter) + s.headerEol;
        let line = 2;
        let blanks = 0;
        const want: [string, number, unknown][] = [['header', 1, headers]];
        s.records.forEach((r, n) => {
          // A CR ending a line, then an empty line ended by LF, is written CR LF: one break. No file can say
          // otherwise, so that empty line is ended by CRLF instead.
          for (const b of r.blanks) text += text.endsWith('\r') && b === '\n' ? '\r\n' : b;
          line += r.blanks.length;
          blanks += r.blanks.length;
          const fields = r.values.map(({ text: v, quote }) => (quote || /[",;\t\r\n]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v));
          const record = fields.join(s.delimiter);
          want.push(['row', line, r.values.map((v) => v.text)]);
          text += record + (n < s.records.length - 1 || s.lastEol ? r.eol : '');
          line += (record.match(BREAK) ?? []).length + 1;
        });
        expect(view(await readAll(text, { chunk: s.chunk }))).toEqual(want);
        // The pre-scan counts the same lines: every record and blank line after the header.
        expect((await scanFile(file(text))).records).toBe(s.records.length + blanks);
      }),
      { numRuns: 300 },
    );
  });
});

describe('the pre-scan counts lines as the reader does', () => {
  it('counts records ended by CRLF, LF or CR, a CR inside quotes not; with and without a final break', async () => {
    expect((await scanFile(file('Name\r\nsolo-a\nsolo-b\nsolo-c\n'))).records).toBe(3);
    expect((await scanFile(file('Name,Status\nrow-a,Open\r\nrow-b,Done\r\n'))).records).toBe(2);
    expect((await scanFile(file('Name\rA\rB\r'))).records).toBe(2);
    expect((await scanFile(file('Name\rA\rB'))).records).toBe(2);
    expect((await scanFile(file('a,b\r"x\ry",1\r\n"p\r\nq",2\n'))).records).toBe(2);
  });

  it('a CRLF split across the 64 KiB read boundary is one break, also for the line of a bad UTF-8 byte', async () => {
    const CHUNK = 64 * 1024;
    // Lines of 8 bytes "row-NNN\r\n" would not land the CR at the boundary; pad the first line instead.
    const first = `Name,${'p'.repeat(CHUNK - 6)}\r`; // ends at byte CHUNK - 1 with the CR
    expect(Buffer.byteLength(first)).toBe(CHUNK);
    const good = `${first}\nA,1\rB,2\r\n`;
    expect((await scanFile(file(good))).records).toBe(2);
    const bad = Buffer.concat([Buffer.from(good), Buffer.from('C,'), Buffer.from([0xff]), Buffer.from('\n')]);
    await expect(scanFile(file(bad))).rejects.toThrow(`is not valid UTF-8 at line 4 (byte ${Buffer.byteLength(good) + 2})`);
  });

  it('names the line of a bad UTF-8 byte counting CR, LF and CRLF once each', async () => {
    await expect(scanFile(file(Buffer.concat([Buffer.from('Name\rok\rbad '), Buffer.from([0xff]), Buffer.from('\r')])))).rejects.toThrow('at line 3 (byte 12)');
    await expect(scanFile(file(Buffer.concat([Buffer.from('a\r\nb\nc\r"d\r\n'), Buffer.from([0xff]), Buffer.from('"\n')])))).rejects.toThrow('at line 5 (byte 11)');
  });

  it('finds the line when the bad sequence starts in the chunk before, and that chunk begins with the LF of a split CRLF', async () => {
    const CHUNK = 64 * 1024;
    const first = `Name,${'p'.repeat(CHUNK - 6)}\r`; // chunk 1 ends with the CR
    const second = `\nA,1\rB,${'q'.repeat(CHUNK - 8)}`; // chunk 2: the LF, one line, a long one
    expect(Buffer.byteLength(second)).toBe(CHUNK - 1);
    // A lead byte ends chunk 2, and chunk 3 starts with a byte that cannot continue it.
    const bytes = Buffer.concat([Buffer.from(first + second), Buffer.from([0xe2]), Buffer.from('X\n')]);
    await expect(scanFile(file(bytes))).rejects.toThrow(`at line 3 (byte ${2 * CHUNK - 1})`);
  });
});

describe('NDJSON lines end at CRLF, LF or CR, in any mix', () => {
  const stream = (text: string, chunk: number) => {
    const buf = Buffer.from(text);
    const parts: Buffer[] = [];
    for (let i = 0; i < buf.length; i += chunk) parts.push(buf.subarray(i, i + chunk));
    return Readable.from(parts);
  };

  it('reads every object at its line, a bad line shown without its CR, blank lines of each style skipped', async () => {
    const text = '{"Name":"a"}\r\n{"Name":"b"}\n{"Name":"c"}\r{bad\r\n\r\n\n\r{"Name":"d","Note":"x\\r\\ny"}\r';
    for (const chunk of [1, 2, 3, 1000]) {
      const items: CsvItem[] = [];
      for await (const item of readNdjson(stream(text, chunk), ['Name', 'Note'])) items.push(item);
      expect(view(items), `chunks of ${chunk}`).toEqual([
        ['header', 0, ['Name', 'Note']],
        ['row', 1, ['a', undefined]],
        ['row', 2, ['b', undefined]],
        ['row', 3, ['c', undefined]],
        ['bad', 4, expect.stringMatching(/^not JSON \(.*\): \{bad$/)],
        ['row', 8, ['d', 'x\r\ny']],
      ]);
    }
    const path = file(text, 'in.ndjson');
    expect(await ndjsonKeys(path)).toEqual(['Name', 'Note']);
    expect((await scanFile(path)).records).toBe(7); // lines after the first, blank ones included: an upper bound
  });
});
