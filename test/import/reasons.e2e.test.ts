// What a CI job reads when rows fail: the first rejected rows' reasons on stderr (with or without
// --rejects, in --json and --quiet too), --dry-run as a gate (exit 3 when a run would reject rows),
// a large row's refusal naming its size, and messages that name the input's own format.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { cli } from '../commands/helpers.js';
import { tempDir } from '../helpers/cli.js';
import { posts, start } from './helpers.js';

/** A CSV in a fresh directory (its journal lives beside it). */
function csv(name: string, lines: string[]): string {
  const file = join(tempDir(), name);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

/** Seven rejected rows among good ones: lines 3, 5, 6, 8, 9, 10 and 12 (an empty row sends nothing). */
function sevenBad(): string {
  const lines = ['Name,Status'];
  for (let line = 2; line <= 12; line++) lines.push([3, 5, 6, 8, 9, 10, 12].includes(line) ? (line === 5 ? 'too,many,fields' : ',') : `ok-${line},Open`);
  return csv('seven.csv', lines);
}

describe('rejected rows: their reasons on stderr', () => {
  it('one bad row without --rejects: its line and reason in the error, and the hint names --rejects FILE (exit 3)', async () => {
    const e = await start();
    const r = await cli(e, ['import', csv('one.csv', ['Name,Status', 'ok-1,Open', 'too,many,fields'])]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('error: 1 row rejected, 0 uncertain (the card may exist):\n  line 3: expected 2 fields, found 3\nhint: Pass --rejects FILE to get every one of those rows, with its reason');
    // The summary no longer lists the line alone: the error names it with its reason.
    expect(r.stderr).not.toMatch(/^rejected line/m);
  });

  it('seven bad rows: the first five by line, then how many more and where they all are; --json keeps stdout JSON', async () => {
    const e = await start();
    const rejects = join(tempDir(), 'fix me.csv');
    const r = await cli(e, ['import', sevenBad(), '--rejects', rejects, '--json']);
    expect(r.code).toBe(3);
    expect(JSON.parse(r.stdout)).toMatchObject({ rows: 11, created: 4, rejected: 7 });
    expect(r.stderr).toContain(
      [
        'error: 7 rows rejected, 0 uncertain (the card may exist):',
        '  line 3: no values to send',
        '  line 5: expected 2 fields, found 3',
        '  line 6: no values to send',
        '  line 8: no values to send',
        '  line 9: no values to send',
        `  … and 2 more; all in --rejects ${rejects}`,
        'hint: Fix the rows in',
      ].join('\n'),
    );
    const all = parse(readFileSync(rejects), { columns: true }) as Record<string, string>[];
    expect(all).toHaveLength(7);
  });

  it('--quiet: no summary, but the error and its reasons stay; without --rejects the count ends the list', async () => {
    const e = await start();
    const r = await cli(e, ['import', sevenBad(), '--quiet']);
    expect(r.code).toBe(3);
    expect(r.stderr).not.toMatch(/^created/m);
    expect(r.stderr).toMatch(/^error: 7 rows rejected, 0 uncertain \(the card may exist\):\n {2}line 3: no values to send\n(.*\n){4} {2}… and 2 more\nhint: Pass --rejects FILE/);
  });

  it('a reason quoting the input is escaped: one line, no escape sequence reaches the terminal', async () => {
    const e = await start();
    const file = join(tempDir(), 'esc.ndjson');
    writeFileSync(file, `${JSON.stringify({ Name: 'ok' })}\nevil\u001b]0;pwned\u0007\r\u202etxt\n`);
    const r = await cli(e, ['import', file]);
    expect(r.code).toBe(3);
    expect(r.stderr).not.toMatch(/[\u001b\u0007\r\u202e]/);
    // The CR ends line 2 (CR, LF and CRLF are line breaks alike); the RTL override starts line 3.
    expect(r.stderr).toMatch(/^ {2}line 2: not JSON \(.*\): evil\\e\]0;pwned\\a\n {2}line 3: not JSON \(.*\): \\u202etxt\nhint: /m);
  });

  it('a row larger than the server takes (NDJSON, 1.4 MB, the emulator answers 400): its reason names the size', async () => {
    const e = await start();
    const file = join(tempDir(), 'big.ndjson');
    writeFileSync(file, `${JSON.stringify({ Name: 'small' })}\n${JSON.stringify({ Name: 'x'.repeat(1_500_000) })}\n`);
    const r = await cli(e, ['import', file]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('  line 2: 400 Bad request (the card sent was 1.4 MB; the server may limit the size of a card)\n');
  });
});

describe('--dry-run as a CI gate', () => {
  it('a row a run would reject: the report as before, then exit 3 with nothing sent; a clean one exits 0', async () => {
    const e = await start();
    const file = csv('dry.csv', ['Name,Status', 'ok-1,Open', ',', 'ok-2,Open']);
    const r = await cli(e, ['import', file, '--dry-run']);
    expect(r.code).toBe(3);
    expect(r.stdout).toContain('  rejected 1\n    line 3: no values to send\n');
    expect(r.stderr).toBe('error: --dry-run: 1 row of 3 would be rejected; nothing was sent.\nhint: Fix the input first: a run would reject that row (exit 3). The report names each with its reason.\n');
    const json = await cli(e, ['import', file, '--dry-run', '--json']);
    expect(json.code).toBe(3);
    expect(JSON.parse(json.stdout)).toMatchObject({ dryRun: true, rows: 3, rejected: 1, rejections: [{ line: 3, reason: 'no values to send' }] });
    // The same rows without the bad one: a clean dry run exits 0, nothing on stderr.
    const clean = await cli(e, ['import', csv('clean.csv', ['Name,Status', 'ok-1,Open', 'ok-2,Open']), '--dry-run']);
    expect(clean.code).toBe(0);
    expect(clean.stderr).toBe('');
    expect(clean.stdout).toContain('  rejected 0\n');
    expect(posts(e)).toBe(0);
  });
});

describe('messages name the input format', () => {
  it('NDJSON with an unknown key: "NDJSON key", never "CSV column"; --skip-column of a missing key likewise', async () => {
    const e = await start();
    const file = join(tempDir(), 'cards.ndjson');
    writeFileSync(file, `${JSON.stringify({ Name: 'a', Stauts: 'Open' })}\n`);
    const r = await cli(e, ['import', file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("error: 1 NDJSON key matches no board field (names are case-sensitive); nothing was sent:\n  key 'Stauts': no field of that name; closest is 'Status': add --map Stauts=Status\n");
    expect(r.stderr).not.toContain('CSV');
    const skip = await cli(e, ['import', file, '--skip-column', 'Nope', '--map', 'Stauts=Status']);
    expect(skip.stderr).toContain("error: --skip-column: the NDJSON has no key 'Nope'.\nhint: Keys: Name, Stauts.");
    expect(posts(e)).toBe(0);
  });

  it('a JSON array says "JSON key", a TSV "TSV column", and the dry-run report of keys says keys', async () => {
    const e = await start();
    const json = join(tempDir(), 'cards.json');
    writeFileSync(json, JSON.stringify([{ Name: 'a', Nope: 1 }]));
    expect((await cli(e, ['import', json])).stderr).toContain("error: 1 JSON key matches no board field (names are case-sensitive); nothing was sent:\n  key 'Nope':");
    const tsv = join(tempDir(), 'cards.tsv');
    writeFileSync(tsv, 'Name\tNope\na\t1\n');
    expect((await cli(e, ['import', tsv])).stderr).toContain("error: 1 TSV column matches no board field (names are case-sensitive); nothing was sent:\n  column 'Nope':");
    const dry = await cli(e, ['import', json, '--skip-column', 'Nope', '--dry-run']);
    expect(dry.stdout).toContain('Keys dropped: Nope');
  });
});
