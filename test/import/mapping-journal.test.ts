import { appendFileSync, chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Clock, realClock } from '../../src/clock.js';
import { Journal } from '../../src/import/journal.js';
import { resolveMapping, rowBody, unmappedError } from '../../src/import/mapping.js';
import { tempDir } from '../helpers/cli.js';

const FIELDS = ['Name', 'Status', 'Owner', 'Priority'];
const none = { map: {}, skipColumns: [] };

describe('resolveMapping', () => {
  it('maps by exact name only, case included, and suggests the close field', () => {
    const r = resolveMapping(['Name', 'status', 'Notes'], FIELDS, none);
    expect(r.columns.map((c) => [c.header, c.target])).toEqual([['Name', { kind: 'field', field: 'Name' }]]);
    expect(r.unmapped).toEqual([
      { header: 'status', index: 1, suggestion: 'Status' },
      { header: 'Notes', index: 2 },
    ]);
    const seen: string[][] = [];
    const hint = unmappedError(r.unmapped, (flags) => {
      seen.push(flags);
      return 'CMD';
    }).hint;
    expect(seen).toEqual([['--map', 'status=Status', '--skip-column', 'Notes']]);
    expect(hint).toBe('CMD   (or --map-file F.json; run on a terminal to map interactively)');
  });

  it('applies --skip-column, --map, the map file (null skips), _id and --allow-unknown in that order', () => {
    const r = resolveMapping(['A', 'B', 'C', '_id', 'Extra', 'Name'], FIELDS, {
      map: { A: 'Owner' },
      mapFile: { A: 'Status', B: null, C: 'Priority' },
      skipColumns: ['Name'],
      allowUnknown: true,
    });
    expect(r.unmapped).toEqual([]);
    expect(r.columns.map((c) => [c.header, c.target, c.how])).toEqual([
      ['A', { kind: 'field', field: 'Owner' }, '--map'],
      ['B', { kind: 'skip' }, 'map file'],
      ['C', { kind: 'field', field: 'Priority' }, 'map file'],
      ['_id', { kind: 'id' }, 'id column'],
      ['Extra', { kind: 'new', field: 'Extra' }, '--allow-unknown'],
      ['Name', { kind: 'skip' }, '--skip-column'],
    ]);
  });

  it('refuses flags naming a missing column, two columns on one field, and a duplicated header', () => {
    expect(() => resolveMapping(['A'], FIELDS, { map: { B: 'Name' }, skipColumns: [] })).toThrow(/the CSV has no column 'B'/);
    expect(() => resolveMapping(['Name', 'Title'], FIELDS, { map: { Title: 'Name' }, skipColumns: [] })).toThrow(
      /Columns 'Name' and 'Title' both map to 'Name'/,
    );
    expect(() => resolveMapping(['Name', 'Name'], FIELDS, none)).toThrow(/names column 'Name' twice/);
    expect(() => resolveMapping(['Key'], FIELDS, { ...none, idColumn: 'Nope' })).toThrow(/--id-column/);
  });

  it('builds bodies of strings; empty cells omitted unless --empty send; an empty id is no id', () => {
    const { columns } = resolveMapping(['_id', 'Name', 'Status'], FIELDS, none);
    expect(rowBody(columns, ['', 'A', ''], false)).toEqual({ Name: 'A' });
    expect(rowBody(columns, ['x1', 'A', ''], true)).toEqual({ _id: 'x1', Name: 'A', Status: '' });
  });
});

const key = { sha256: 'abc', board: 'b1', baseUrl: 'http://h', server: 'h:80', input: '/in.csv', plan: 'p1' };
const OPEN = { timeoutMs: 30_000, clock: realClock };

describe('Journal', () => {
  it('reads back each row by line and digest (its last record), ignores a line cut short by kill -9, and appends after it', async () => {
    const path = join(tempDir(), 'j.log');
    const j = await Journal.open(path, key, OPEN);
    const [d2, d3, d4] = ['a', 'b', 'c'].map((x) => x.repeat(16));
    j.sending(2, d2!);
    j.record(2, d2!, 'created', 'id-2');
    j.sending(3, d3!);
    j.sending(4, d4!);
    j.close();
    appendFileSync(path, `4\tcreat`);
    const again = await Journal.open(path, key, OPEN);
    expect(again.found).toMatchObject({ board: 'b1', baseUrl: 'http://h', input: '/in.csv', sha256: 'abc', plan: 'p1' });
    expect(again.previous).toEqual([
      { line: 2, digest: d2, state: 'created', id: 'id-2', run: 0 },
      { line: 3, digest: d3, state: 'sending', run: 0 },
      { line: 4, digest: d4, state: 'sending', run: 0 },
    ]);
    expect(again.runs).toEqual([{ at: expect.any(String), timeoutMs: 30_000, sha256: 'abc' }]);
    // Rows 3 and 4 may be landing until the run's own timeout after its last write (the file's mtime).
    expect(again.landsBy(1)).toBe(again.lastWritten! + 30_000);
    again.record(4, d4!, 'updated', 'id-4');
    again.close();
    expect((await Journal.open(path, key, OPEN)).previous.find((e) => e.line === 4)).toEqual({ line: 4, digest: d4, state: 'updated', id: 'id-4', run: 1 });
    // The cut line is ended before anything is appended: the next run's line, then the record.
    expect(readFileSync(path, 'utf8')).toMatch(new RegExp(`4\tcreat\n\\{"run":"[^"]+","timeoutMs":30000,"sha256":"abc"\\}\n4\tupdated\tid-4\t${d4}\n`));
  });

  it('refuses a journal of another board or server (by identity, not spelling), or not a journal; applies one of other content or plan', async () => {
    const path = join(tempDir(), 'j.log');
    const j = await Journal.open(path, key, OPEN);
    j.record(2, 'a'.repeat(16), 'created', 'id-2');
    j.close();
    for (const other of [{ board: 'b2' }, { server: 'other:80', baseUrl: 'http://other' }]) {
      await expect(Journal.open(path, { ...key, ...other }, OPEN)).rejects.toThrow(/belongs to board b1 at http:\/\/h; it is not applied/);
    }
    // Another spelling of the same server: the same journal.
    const spelled = await Journal.open(path, { ...key, baseUrl: 'http://H.' }, OPEN);
    expect(spelled.previous).toHaveLength(1);
    spelled.close();
    const changed = await Journal.open(path, { ...key, sha256: 'def', plan: 'p2' }, OPEN);
    expect(changed.previous).toHaveLength(1);
    changed.close();
    const notOurs = 'Name,Status\nA,B\n';
    writeFileSync(path, notOurs);
    chmodSync(path, 0o644);
    for (const forget of [undefined, 'all', 'finished'] as const) {
      await expect(Journal.open(path, key, { ...OPEN, forget })).rejects.toThrow(/is not an import journal; it is neither read nor changed/);
    }
    expect(readFileSync(path, 'utf8')).toBe(notOurs);
    expect(statSync(path).mode & 0o777).toBe(0o644);
    writeFileSync(path, '{"cardboard-import-journal":2,"board":"b1","baseUrl":"http://h"}\n2\tcreated\tid\n');
    await expect(Journal.open(path, key, OPEN)).rejects.toThrow(/written by another version of cardboard/);
    // --restart takes a journal of another version (cardboard wrote it) as a new one.
    const restarted = await Journal.open(path, key, { ...OPEN, forget: 'all' });
    expect(restarted.previous).toHaveLength(0);
    restarted.close();
  });

  it('never deletes a record: --again forgets rows finished, --restart every row, and later runs forget them too; card ids stay known', async () => {
    const path = join(tempDir(), 'j.log');
    const [a, b, c] = ['a', 'b', 'c'].map((x) => x.repeat(16));
    const first = await Journal.open(path, key, OPEN);
    first.record(2, a!, 'created', 'id-a');
    first.record(3, b!, 'uncertain');
    first.sending(4, c!);
    first.complete();
    first.close();
    const again = await Journal.open(path, key, { ...OPEN, forget: 'finished' });
    expect(again.previous.map((e) => e.state)).toEqual(['uncertain', 'sending']);
    expect([...again.knownIds]).toEqual(['id-a']);
    expect(again.lastRunComplete()).toBe(true);
    again.close();
    const later = await Journal.open(path, key, OPEN);
    expect(later.previous.map((e) => e.state)).toEqual(['uncertain', 'sending']);
    expect(later.lastRunComplete()).toBe(false);
    later.close();
    const restart = await Journal.open(path, key, { ...OPEN, forget: 'all' });
    expect(restart.previous).toEqual([]);
    expect([...restart.knownIds]).toEqual(['id-a']);
    restart.close();
    expect(readFileSync(path, 'utf8')).toContain(`2\tcreated\tid-a\t${a}`);
    expect((await Journal.open(path, key, OPEN)).previous).toEqual([]);
  });

  it('rows that may be landing wait for the run that sent them: its end (the next run\'s start) plus its own timeout', async () => {
    const path = join(tempDir(), 'j.log');
    const header = JSON.stringify({ 'cardboard-import-journal': 3, ...key, started: '2026-01-01T00:00:00.000Z' });
    const [a, b] = ['a', 'b'].map((x) => x.repeat(16));
    writeFileSync(
      path,
      [
        header,
        JSON.stringify({ run: '2026-01-01T00:00:00.000Z', timeoutMs: 5000 }),
        `2\tsending\t\t${a}`,
        JSON.stringify({ run: '2026-01-01T00:01:00.000Z', timeoutMs: 90_000 }),
        `3\tcreated\tid-3\t${b}`,
        '',
      ].join('\n'),
    );
    const j = await Journal.open(path, key, OPEN);
    // Row 2 was sent by the first run, which ended when the second began: 00:01:00 + 5 s.
    expect(j.landsBy(30_000)).toBe(Date.parse('2026-01-01T00:01:05.000Z'));
    j.record(3, b!, 'uncertain');
    j.close();
    const later = await Journal.open(path, key, OPEN);
    // Now the third run (30 s, OPEN) left row 3 uncertain, and it was the last to write.
    expect(later.landsBy(1)).toBe(later.lastWritten! + 30_000);
    later.close();
  });

  it('asks whether the cards it remembers are gone, and forgets the rows finished when they are', async () => {
    const path = join(tempDir(), 'j.log');
    const first = await Journal.open(path, key, OPEN);
    first.record(2, 'a'.repeat(16), 'created', 'id-a');
    first.record(3, 'b'.repeat(16), 'uncertain');
    first.close();
    let asked: string[] = [];
    const kept = await Journal.open(path, key, { ...OPEN, stale: async (entries) => ((asked = entries.map((e) => e.state)), false) });
    expect(asked).toEqual(['created', 'uncertain']);
    expect(kept.previous).toHaveLength(2);
    expect(kept.lastImportAt()).toBe(kept.runs[0]!.at);
    kept.close();
    const stale = await Journal.open(path, key, { ...OPEN, stale: async () => true });
    expect(stale.previous.map((e) => e.state)).toEqual(['uncertain']);
    stale.close();
    expect((await Journal.open(path, key, OPEN)).previous.map((e) => e.state)).toEqual(['uncertain']);
  });
});

describe('Journal on the run\'s clock', () => {
  /** A clock stopped at `at` whose sleeps wait until the test ends them (or the journal aborts them). */
  function stoppedClock(at: number) {
    const sleeps: { ms: number; end: () => void }[] = [];
    const clock: Clock = {
      now: () => at,
      random: () => 0.5,
      sleep: (ms, signal) =>
        new Promise<void>((resolve) => {
          sleeps.push({ ms, end: resolve });
          signal?.addEventListener('abort', () => resolve(), { once: true });
        }),
    };
    return { clock, sleeps };
  }

  it('dates its run and the end of its input by the clock, and writes a record made between requests when the clock says', async () => {
    const path = join(tempDir(), 'j.log');
    const at = Date.parse('2031-02-03T04:05:06.000Z');
    const { clock, sleeps } = stoppedClock(at);
    const j = await Journal.open(path, key, { timeoutMs: 30_000, clock });
    expect(readFileSync(path, 'utf8')).toContain('{"run":"2031-02-03T04:05:06.000Z"');
    j.record(2, 'a'.repeat(16), 'created', 'id-2');
    j.record(3, 'b'.repeat(16), 'created', 'id-3');
    // One write is due, FLUSH_MS later by the clock, for every record made meanwhile.
    expect(sleeps.map((s) => s.ms)).toEqual([200]);
    expect(readFileSync(path, 'utf8')).not.toContain('created');
    sleeps[0]!.end();
    await new Promise((r) => setImmediate(r));
    expect(readFileSync(path, 'utf8')).toMatch(/\n2\tcreated\tid-2\t[a]{16}\n3\tcreated\tid-3\t[b]{16}\n$/);
    j.complete();
    j.close();
    expect(readFileSync(path, 'utf8')).toMatch(/\{"complete":"2031-02-03T04:05:06\.000Z"\}\n$/);
  });
});

describe('mapping: headers that are names of Object.prototype', () => {
  it('treats constructor, __proto__ and toString as plain headers, in --map and --map-file too', async () => {
    const { resolveMapping, parseMapFile, parseMapFlag } = await import('../../src/import/mapping.js');
    const headers = ['constructor', '__proto__', 'toString', 'Name'];
    const plain = resolveMapping(headers, ['Name'], { map: Object.create(null), skipColumns: [] });
    expect(plain.unmapped.map((u) => u.header)).toEqual(['constructor', '__proto__', 'toString']);
    const mapFile = parseMapFile('{"Name":"Name","toString":null}', 'm.json');
    const map = parseMapFlag('__proto__=Name2');
    const mapped = resolveMapping(headers, ['Name', 'Name2'], { map, mapFile, skipColumns: ['constructor'] });
    expect(mapped.unmapped).toEqual([]);
    expect(mapped.columns.map((c) => [c.header, c.target.kind === 'field' ? c.target.field : c.target.kind])).toEqual([
      ['constructor', 'skip'],
      ['__proto__', 'Name2'],
      ['toString', 'skip'],
      ['Name', 'Name'],
    ]);
  });
});
