// Tables fit the terminal by display width. Every line at most the terminal's width, `_id` whole, no frame
// and no rule lines, cells cut with … only between grapheme clusters, bold headers intact.
import { readFileSync } from 'node:fs';
import { parse } from 'csv-parse/sync';
import stringWidth from 'string-width';
import { describe, expect, it } from 'vitest';
import { layoutTable, printTable } from '../../src/io/table.js';
import { testContext } from './buffers.js';

const FAMILY = '👩‍👩‍👧‍👦';
const CODER = '🧑‍💻';
const CJK = '漢字テキストの長い説明です';
const COMBINING = 'e\u0301'.repeat(20);
const ANSI = /\u001b\[[0-9;]*m/g;

/** A TTY test context `cols` wide; colour on when asked. */
function at(cols: number, colour = false) {
  const t = testContext({ tty: true, env: colour ? { NO_COLOR: undefined, TERM: 'xterm' } : {} });
  t.stdout.columns = cols;
  return t;
}

const ids = ['JShpBxEFgRmZnivTf', 'a1b2c3d4e5f60718a9b0c1d2', 'k9'];
const head = ['_id', ...Array.from({ length: 30 }, (_, i) => `Field ${i + 1}`)];
const rows = ids.map((id, r) => [id, `${CJK} ${r}`, `${FAMILY} family ${FAMILY}`, COMBINING, `${CODER} coder`, ...Array.from({ length: 26 }, (_, i) => `value ${r}-${i}`)]);

/** Every grapheme of the cells that contains part of a sequence: it must be the whole sequence. */
function clusterIntact(text: string): void {
  const seg = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  for (const { segment } of seg.segment(text)) {
    if (segment.includes('\u200d') && segment.includes('👩')) expect(segment).toBe(FAMILY);
    if (segment.includes('\u200d') && segment.includes('💻')) expect(segment).toBe(CODER);
    if (segment.includes('\u0301')) expect(segment).toBe('e\u0301');
  }
  // A combining mark never starts a cell (a mark cut off its letter would).
  expect(text).not.toMatch(/(^| )\u0301/m);
}

describe('a 30-field list at 40, 80 and 200 columns', () => {
  for (const cols of [40, 80, 200]) {
    it(`${cols} columns: no line wider, _id whole, no frame or rule, clusters intact`, () => {
      const { ctx } = at(cols);
      const { text, omitted } = layoutTable(ctx, head, rows, { keep: ['_id'] });
      const lines = text.trimEnd().split('\n');
      for (const line of lines) expect(stringWidth(line), line).toBeLessThanOrEqual(cols);
      for (const [r, id] of ids.entries()) expect(lines[r + 1]).toMatch(new RegExp(`^${id} +\\S`));
      // A header, then one line per row: no border, no rule.
      expect(lines).toHaveLength(1 + rows.length);
      expect(text).not.toMatch(/[│┌├└─]/);
      expect(lines[0]).toMatch(/^_id +Field 1( |$)/);
      clusterIntact(text);
      // Columns are left out (last first) rather than every cell cut: the short values shown are whole.
      expect(text).not.toMatch(/value [\d-]*…/);
      expect(omitted).toEqual(head.slice(head.length - omitted.length));
      expect(omitted).not.toContain('Field 1');
      expect(omitted.length).toBe({ 40: 29, 80: 28, 200: 17 }[cols]);
    });
  }
  it('at 200 columns the headers shown are whole, not `Field…`', () => {
    const { text, omitted } = layoutTable(at(200).ctx, head, rows, { keep: ['_id'] });
    const header = text.split('\n')[0]!;
    for (const h of head.slice(1).filter((name) => !omitted.includes(name))) expect(header.split(/ {2,}/)).toContain(h);
    expect(header).not.toContain('…');
  });
  it('leaves columns out last-first and says so on stderr, naming --fields', async () => {
    const { ctx, stdout, stderr } = at(80);
    await printTable(ctx, head, rows, { keep: ['_id'], omittedHint: 'choose columns with --fields, or see every field with --format json or csv' });
    expect(stdout.text).toContain('Field 1');
    expect(stdout.text).not.toContain('Field 30');
    expect(stderr.text).toMatch(/^\d+ columns not shown to fit the terminal \(Field \d+, Field \d+, Field \d+, Field \d+ and \d+ more\): choose columns with --fields/);
    expect(stderr.text.trimEnd().split('\n')).toHaveLength(1);
  });
});

describe('a record (card get) at 40 columns', () => {
  const id = 'a1b2c3d4e5f60718a9b0c1d2';
  const record = [
    ['_id', id],
    ['Name', `Fix the login page ${CJK} and a long English sentence that has to wrap somewhere`],
    ['Owner', `Alice ${FAMILY.repeat(14)}`],
    ['Notes', COMBINING.repeat(3)],
  ];
  const layout = () => layoutTable(at(40).ctx, ['field', 'value'], record, { wrap: true, minWidths: [undefined, id.length] });
  /** The value column's lines, the cell's text per field (continuation lines joined). */
  function values(text: string): Map<string, string[]> {
    const out = new Map<string, string[]>();
    let field = '';
    const lines = text.trimEnd().split('\n');
    const at = lines[0]!.indexOf('value');
    for (const line of lines.slice(1)) {
      const [name, value] = [line.slice(0, at).trim(), line.slice(at)];
      if (name !== '') field = name!;
      out.set(field, [...(out.get(field) ?? []), value!]);
    }
    return out;
  }
  it('no line wider than 40; `_id` whole on one line', () => {
    const { text } = layout();
    for (const line of text.trimEnd().split('\n')) expect(stringWidth(line), line).toBeLessThanOrEqual(40);
    expect(values(text).get('_id')).toEqual([id]);
  });
  it('wraps at word boundaries, loses no character of CJK text, splits no emoji sequence', () => {
    const { text } = layout();
    const name = values(text).get('Name')!;
    expect(name.length).toBeGreaterThan(2);
    // Joined back (a wrapped space was dropped at each break, CJK breaks have none): the value, whole.
    expect(name.join(' ').replace(/(\p{Script=Han}|\p{Script=Katakana}|\p{Script=Hiragana}) (?=\p{Script=Han}|\p{Script=Katakana}|\p{Script=Hiragana})/gu, '$1')).toBe(record[1]![1]);
    const words = new Set(record[1]![1]!.split(' '));
    // Every Latin word on a line is a whole word of the value (no mid-word break).
    for (const line of name) for (const w of line.split(' ')) if (/^[A-Za-z]+$/.test(w)) expect(words.has(w), w).toBe(true);
    const owner = values(text).get('Owner')!.join('');
    expect(owner).toBe(`Alice${FAMILY.repeat(14)}`);
    clusterIntact(text);
  });
  it('a bold header shorter than its column survives (not cut inside its escape: `fi` / `eld␛[2`)', () => {
    const { text } = layoutTable(at(40, true).ctx, ['field', 'value'], [['a', 'b'], ['a longer name', 'c']], { wrap: true });
    const header = text.split('\n')[0]!;
    expect(header).toMatch(/^\u001b\[1mfield\u001b\[22m {10}\u001b\[1mvalue\u001b\[22m$/);
    expect(header.replace(ANSI, '').indexOf('value')).toBe(text.split('\n')[2]!.indexOf('c'));
    // The escape codes are only cardboard's own bold on and off.
    expect(text.match(/\u001b\[[^m]*m/g)).toEqual(['\u001b[1m', '\u001b[22m', '\u001b[1m', '\u001b[22m']);
  });
});

describe('schema', () => {
  it('30 fields fit in 31 lines (a header, no frame, no line between rows)', () => {
    const fields = Array.from({ length: 30 }, (_, i) => [`Field ${i + 1}`, `0f8fad5b-d9cb-469f-a165-70867728950${i % 10}`]);
    const { text } = layoutTable(at(80).ctx, ['name', 'uuid'], fields, { keep: ['uuid'] });
    expect(text.trimEnd().split('\n')).toHaveLength(31);
    expect(text).toContain('\nField 1   0f8fad5b-d9cb-469f-a165-708677289500\n');
    expect(text).toContain('\nField 30  0f8fad5b-d9cb-469f-a165-708677289509\n');
  });
  it('at 40 columns a uuid is left out rather than cut', () => {
    const { text, omitted } = layoutTable(at(40).ctx, ['name', 'uuid'], [['Name', '0f8fad5b-d9cb-469f-a165-708677289500']], { keep: ['uuid'] });
    expect(omitted).toEqual(['uuid']);
    expect(text).not.toContain('0f8fad5b');
  });
});

describe('the demo board (fixtures/demo-cards.csv) at 80 columns', () => {
  const csv = parse(readFileSync(new URL('../../fixtures/demo-cards.csv', import.meta.url), 'utf8'), { columns: true }) as Record<string, string>[];
  const head = ['_id', 'Name', 'Status', 'Owner', 'Priority'];
  const cards = csv.map((r, i) => [`JShpBxEFgRmZniv${String(i).padStart(2, '0')}`, r.Name, r.Status, r.Assignee, r.Priority]);
  it('every field fits, Priority included: no frame takes the columns it needs', () => {
    const { text, omitted } = layoutTable(at(80).ctx, head, cards, { keep: ['_id'] });
    expect(omitted).toEqual([]);
    const lines = text.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^_id {16}Name +Status +Owner +Priority$/);
    for (const line of lines) expect(stringWidth(line), line).toBeLessThanOrEqual(80);
    // Each value starts where its header does: the columns are aligned.
    const at0 = lines[0]!.indexOf('Priority');
    for (const [k, line] of lines.slice(1).entries()) expect(line.slice(at0), line).toBe(cards[k]![4]);
  });
});
