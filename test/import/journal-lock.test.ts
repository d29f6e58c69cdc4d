import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createHash } from 'node:crypto';
import { existsSync, linkSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { importCommandLine, nextOutputName } from '../../src/commands/import/command-line.js';
import { defaultJournalPath, Journal, planDigest, rowDigest } from '../../src/import/journal.js';
import { canonicalJson } from '../../src/import/match-index.js';
import { emptyRecord, fieldRecord } from '../../src/own-keys.js';
import { lockBoard } from '../../src/import/board-lock.js';
import { FileLock } from '../../src/file-lock.js';
import { realClock } from '../../src/clock.js';
import { checkOutputPaths } from '../../src/import/path-guard.js';
import { DEFAULT_CONCURRENCY, planFromFlags } from '../../src/commands/import/plan-from-flags.js';
import type { ColumnMapping } from '../../src/import/types.js';
import { tempDir } from '../helpers/cli.js';

// The built module (npm run build): racers are separate processes, as in real use.
const LOCK_JS = fileURLToPath(new URL('../../dist/file-lock.js', import.meta.url));
const col = (header: string, field: string, index = 0): ColumnMapping => ({ header, index, target: { kind: 'field', field }, how: '--map' });
/** Commander's values when no flag is given. */
const flags = { map: [], skipColumn: [], concurrency: String(DEFAULT_CONCURRENCY), empty: 'omit', type: [] };

describe('journal keys', () => {
  it('the plan digest changes with everything that changes what is sent, and only with that', () => {
    const columns = [col('Who', 'Status')];
    const d = planDigest(planFromFlags('w.csv', flags), columns);
    expect(planDigest(planFromFlags('w.csv', flags), [col('Who', 'Status')])).toBe(d);
    // Flags that change nothing sent: the outputs, the pace, --force, --restart, --dry-run.
    const same = { results: 'r.csv', rejects: 'x.csv', journal: 'j.log', concurrency: '2', giveUpAfter: '1h', force: true, restart: true, dryRun: true, json: true };
    expect(planDigest(planFromFlags('w.csv', { ...flags, ...same }), columns)).toBe(d);
    const others: [string, Record<string, unknown>, ColumnMapping[]][] = [
      ['w.csv', flags, [col('Who', 'Owner')]],
      ['w.csv', { ...flags, empty: 'send' }, columns],
      ['w.csv', { ...flags, type: ['Who=number'] }, columns],
      ['w.csv', { ...flags, idColumn: 'Key' }, columns],
      ['w.csv', { ...flags, matchOn: 'Status' }, columns],
      ['w.csv', { ...flags, inputFormat: 'ndjson' }, columns],
      ['w.tsv', flags, columns],
      ['w.csv', { ...flags, encoding: 'latin1' }, columns],
    ];
    const digests = others.map(([file, f, c]) => planDigest(planFromFlags(file, f), c));
    expect(new Set([d, ...digests]).size).toBe(others.length + 1);
  });

  it('names the journal by input path, board and server, not by content or plan', async () => {
    const dir = tempDir();
    const input = join(dir, 'w.csv');
    const key = { board: 'b/1', server: 'h:80' };
    const path = defaultJournalPath(input, key);
    expect(path).toMatch(/\.cardboard-journal\/w\.csv\.b_1\.[0-9a-f]{8}\.[0-9a-f]{8}\.log$/);
    expect(defaultJournalPath(input, { ...key, server: 'other:80' })).not.toBe(path);
    expect(defaultJournalPath(join(dir, 'sub', 'w.csv'), key).endsWith(path.slice(path.lastIndexOf('/')))).toBe(false);
    // Nothing sent (an output could not be opened): a journal this run created goes; one it found stays.
    const j = await Journal.open(path, { ...key, baseUrl: 'http://h', input, plan: 'e'.repeat(64) }, { timeoutMs: 30_000, clock: realClock });
    j.discard();
    expect(existsSync(path)).toBe(false);
    writeFileSync(path, '');
    const found = await Journal.open(path, { ...key, baseUrl: 'http://h', input, plan: 'e'.repeat(64) }, { timeoutMs: 30_000, clock: realClock });
    found.discard();
    expect(existsSync(path)).toBe(true);
  });

  it('the digest of a row is of what it sends: key order does not matter, a value does, an _id from the index does not', () => {
    const d = rowDigest({ Name: 'A', Status: 'Open' }, false);
    expect(d).toMatch(/^[0-9a-f]{16}$/);
    expect(rowDigest({ Status: 'Open', Name: 'A' }, false)).toBe(d);
    expect(rowDigest({ Name: 'A', Status: 'Open ' }, false)).not.toBe(d);
    expect(rowDigest({ Name: 'A', Status: 3 }, false)).not.toBe(rowDigest({ Name: 'A', Status: '3' }, false));
    expect(rowDigest({ _id: 'x1', Name: 'A', Status: 'Open' }, true)).toBe(d);
    expect(rowDigest({ _id: 'x1', Name: 'A', Status: 'Open' }, false)).not.toBe(d);
  });

  it('the digest of a row is sha1 of its canonical JSON, whatever the order of its keys (few or many, any characters)', () => {
    // Journals of earlier runs hold these digests: the form is fixed, however the keys are sorted.
    const keys = ['b', 'B', '_id', 'Z', 'a', 'é', 'aa', '10', '9', '', 'a b', '\u{1F600}', 'Ω', 'e\u0301'];
    for (const n of [0, 1, 2, 5, 14]) {
      for (let shift = 0; shift < 3; shift++) {
        const body = emptyRecord();
        for (let i = 0; i < n; i++) body[keys[(i + shift * 5) % keys.length]!] = i % 3 === 0 ? i : `v${i}`;
        const expected = createHash('sha1').update(canonicalJson(body)).digest('hex').slice(0, 16);
        expect(rowDigest(body, false)).toBe(expected);
      }
    }
    // More columns than the in-place sort takes: the same digest.
    const wide = emptyRecord();
    for (let i = 40; i > 0; i--) wide[`col${i}`] = `v${i}`;
    expect(rowDigest(wide, false)).toBe(createHash('sha1').update(canonicalJson(wide)).digest('hex').slice(0, 16));
  });

  it('the digest is canonical for every kind of value and body: typed scalars, nested values, absent ones, the names of Object.prototype', () => {
    const sha = (o: object) => createHash('sha1').update(canonicalJson(o)).digest('hex').slice(0, 16);
    const scalars = { Name: 'A "q" \\ \u0001', Count: -0, Ratio: 1.5e-7, Done: false, Gone: null, Skipped: undefined, Big: 1e21 };
    const nested = { Name: 'A', Tags: ['b', { z: 1, a: [null, 'x'] }], Meta: { y: 'n', x: { d: 1, c: 2 } } };
    for (const body of [scalars, nested, { ...scalars, ...nested }]) {
      expect(rowDigest(body, false)).toBe(sha(body));
      // An _id found by --match-on is left out, whatever the other values.
      expect(rowDigest({ ...body, _id: 'c9' }, true)).toBe(sha(body));
      expect(rowDigest({ ...body, _id: 'c9' }, false)).toBe(sha({ ...body, _id: 'c9' }));
    }
    // A row body as rowBody makes it (fieldRecord), with field names a plain object would inherit or misread.
    const body = fieldRecord();
    for (const [k, v] of [['toJSON', 'x'], ['__proto__', 'p'], ['constructor', 'c'], ['toString', 1], ['valueOf', true]] as const) body[k] = v;
    expect(Object.keys(body)).toEqual(['toJSON', '__proto__', 'constructor', 'toString', 'valueOf']);
    const same = emptyRecord();
    Object.assign(same, body);
    expect(rowDigest(body, false)).toBe(sha(same));
    body.Nested = { __proto__: null, b: 1, a: 2 };
    expect(rowDigest(body, false)).toBe(createHash('sha1').update(canonicalJson(Object.assign(emptyRecord(), body))).digest('hex').slice(0, 16));
  });
});

describe('FileLock', () => {
  it('refuses while the holder lives (exit 1, pid and path named), is released, and a dead pid is taken over', async () => {
    const path = join(tempDir(), 'x.lock');
    const lock = await lockBoard(path, 'importing cards.csv');
    expect(JSON.parse(readFileSync(path, 'utf8'))).toMatchObject({ pid: process.pid, doing: 'importing cards.csv' });
    const refused: unknown = await lockBoard(path, 'importing other.csv').catch((err: unknown) => err);
    expect(refused).toMatchObject({ exitCode: 1, name: 'CardboardError' });
    expect(String((refused as Error).message)).toMatch(/^Another import into this board is running: process \d+ on .*, importing cards\.csv/);
    expect(String((refused as Error).message)).toContain(`process ${process.pid}`);
    expect(String((refused as Error).message)).toContain(path);
    // The general lock, without a refusal of its own: the lock and its owner are named.
    await expect(FileLock.acquire(path)).rejects.toThrow(`The lock ${path} is held by process ${process.pid}`);
    lock.release();
    expect(existsSync(path)).toBe(false);

    // A lock left by a process that is gone (its pid is dead).
    const dead = spawn(process.execPath, ['-e', '0']);
    await new Promise((r) => dead.on('close', r));
    writeFileSync(path, JSON.stringify({ pid: dead.pid, host: hostname(), started: 'then' }));
    const taken = await FileLock.acquire(path);
    expect(JSON.parse(readFileSync(path, 'utf8')).pid).toBe(process.pid);
    taken.release();
  });

  it('of processes racing to take over one stale lock, exactly one gets it; process.exit releases it', async () => {
    const path = join(tempDir(), 'race.lock');
    const dead = spawn(process.execPath, ['-e', '0']);
    await new Promise((r) => dead.on('close', r));
    writeFileSync(path, JSON.stringify({ pid: dead.pid, host: hostname(), started: 'then' }));
    // The racer that gets it holds it until every racer has said how it fared (its stdin ends then: not a
    // time, which a late-starting racer on a loaded machine could outlast), then leaves by process.exit
    // (the second Ctrl-C's path).
    const script = `import(${JSON.stringify(LOCK_JS)}).then((m) => {
      m.FileLock.acquire(${JSON.stringify(path)}).then(() => { process.stdout.write('got'); process.stdin.on('end', () => process.exit(130)).resume(); },
        (err) => process.stdout.write(err.exitCode === 1 ? 'busy' : String(err)));
    });`;
    const racers = Array.from({ length: 4 }, () => {
      const child = spawn(process.execPath, ['-e', script]);
      let out = '';
      const said = new Promise<void>((resolve) => {
        child.stdout.on('data', (b: Buffer) => {
          out += b.toString();
          resolve();
        });
        child.on('close', () => resolve());
      });
      const closed = new Promise<string>((resolve) => child.on('close', () => resolve(out)));
      return { child, said, closed };
    });
    await Promise.all(racers.map((r) => r.said));
    for (const r of racers) r.child.stdin.end();
    const outs = await Promise.all(racers.map((r) => r.closed));
    expect(outs.sort()).toEqual(['busy', 'busy', 'busy', 'got']);
    expect(existsSync(path)).toBe(false);
  });

  it('holds every lock of the process with one exit hook, taken off with the last; process.exit releases them all', async () => {
    const dir = tempDir();
    const before = process.listenerCount('exit');
    const a = await FileLock.acquire(join(dir, 'a.lock'));
    const b = await FileLock.acquire(join(dir, 'b.lock'));
    expect(process.listenerCount('exit') - before).toBeLessThanOrEqual(1);
    a.release();
    b.release();
    expect(process.listenerCount('exit')).toBe(before);
    // Two locks held, then process.exit (the second Ctrl-C's path): the one hook releases both.
    const script = `import(${JSON.stringify(LOCK_JS)}).then(async (m) => {
      await m.FileLock.acquire(${JSON.stringify(join(dir, 'c.lock'))});
      await m.FileLock.acquire(${JSON.stringify(join(dir, 'd.lock'))});
      process.exit(130);
    });`;
    const child = spawn(process.execPath, ['-e', script], { stdio: 'ignore' });
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(130);
    expect([existsSync(join(dir, 'c.lock')), existsSync(join(dir, 'd.lock'))]).toEqual([false, false]);
  });

  it('waits for a lock being written without blocking the event loop, and refuses once it reads a live owner', async () => {
    const path = join(tempDir(), 'w.lock');
    // Created and not written yet: what another process sees between its O_EXCL create and its write.
    writeFileSync(path, '');
    const taking = FileLock.acquire(path);
    // Runs only if the wait lets the event loop go on: the other process's write lands.
    setImmediate(() => writeFileSync(path, JSON.stringify({ pid: process.pid, host: hostname(), started: 'now', doing: 'writing it' })));
    await expect(taking).rejects.toThrow(`The lock ${path} is held by process ${process.pid} on ${hostname()}, writing it`);
  });

  it("stamps the lock with the injected clock's time", async () => {
    const path = join(tempDir(), 'clock.lock');
    const at = Date.parse('2031-02-03T04:05:06.000Z');
    const lock = await lockBoard(path, 'importing c.csv', { ...realClock, now: () => at });
    expect(JSON.parse(readFileSync(path, 'utf8'))).toMatchObject({ started: '2031-02-03T04:05:06.000Z', doing: 'importing c.csv' });
    lock.release();
  });

  it('does not delete a lock that another process holds now', async () => {
    const path = join(tempDir(), 'y.lock');
    const lock = await FileLock.acquire(path);
    writeFileSync(path, JSON.stringify({ pid: 1, host: 'elsewhere', started: 'now' }));
    lock.release();
    expect(existsSync(path)).toBe(true);
  });
});

describe('checkOutputPaths', () => {
  it('refuses outputs that are the input by name, symlink or hard link, or each other; exit 2', () => {
    const dir = tempDir();
    const input = join(dir, 'in.csv');
    writeFileSync(input, 'Name\nA\n');
    symlinkSync(input, join(dir, 'sym.csv'));
    linkSync(input, join(dir, 'hard.csv'));
    for (const p of [input, join(dir, 'sym.csv'), join(dir, 'hard.csv'), join(dir, '.', 'in.csv')]) {
      expect(() => checkOutputPaths(input, [{ flag: '--results', path: p }])).toThrow(expect.objectContaining({ exitCode: 2 }));
    }
    expect(() => checkOutputPaths(input, [{ flag: '--journal', path: input }])).toThrow(/--journal .* is the input/);
    expect(() =>
      checkOutputPaths('-', [
        { flag: '--results', path: join(dir, 'o.csv') },
        { flag: '--rejects', path: join(dir, 'o.csv') },
      ]),
    ).toThrow(/--rejects .* is --results/);
    expect(() => checkOutputPaths(input, [{ flag: '--results', path: join(dir, 'r.csv') }, { flag: '--rejects', path: undefined }])).not.toThrow();
  });
});

describe('importCommandLine', () => {
  it('repeats every option, shell-quoted, and the globals that matter; never a secret', () => {
    const opts = planFromFlags("it's mine.csv", {
      ...flags,
      map: ['Who=Owner', 'A b=Name'],
      mapFile: 'm.json',
      skipColumn: ['x y'],
      matchOn: 'Name',
      idColumn: 'Key',
      dryRun: true,
      concurrency: '4',
      giveUpAfter: '30m',
      journal: 'j.log',
      restart: true,
      results: 'r.csv',
      rejects: 'rej.csv',
      delimiter: ';',
      encoding: 'latin1',
      empty: 'send',
      allowUnknown: true,
      inputFormat: 'csv',
      type: ['N=number'],
      force: true,
      json: true,
    });
    const globals = { board: 'hook', baseUrl: 'https://u:s3cr3t-pass@cards.example/api', rate: 2, timeout: { ms: 90_000, text: '90s' }, insecure: true, verbose: true };
    expect(importCommandLine(opts, globals)).toBe(
      "cardboard -b hook --base-url https://cards.example/api --rate 2/s --timeout 90s --insecure import 'it'\\''s mine.csv' " +
        "--map Who=Owner --map 'A b=Name' --map-file m.json --skip-column 'x y' --match-on Name --id-column Key --input-format csv " +
        "--type N=number --delimiter ';' --encoding latin1 --empty send --allow-unknown --force --concurrency 4 --give-up-after 30m " +
        '--journal j.log --results r.csv --rejects rej.csv --dry-run --json',
    );
    expect(importCommandLine(opts, globals)).not.toContain('s3cr3t');
    expect(importCommandLine(planFromFlags('f.csv', flags), { rate: 0.5 })).toBe('cardboard --rate 30/min import f.csv');
  });

  it('overrides the input and the outputs for a rejects file, without its journal', () => {
    const opts = planFromFlags('f.csv', { ...flags, journal: 'j.log', results: 'r.csv', rejects: 'fix.csv' });
    expect(importCommandLine(opts, {}, { file: 'fix.csv', rejects: nextOutputName('fix.csv'), results: null, matchOn: 'Name' })).toBe(
      'cardboard import fix.csv --match-on Name --rejects fix.2.csv',
    );
    expect(nextOutputName('out/fix.2.csv')).toBe('out/fix.3.csv');
    expect(nextOutputName('fix')).toBe('fix.2');
  });
});
