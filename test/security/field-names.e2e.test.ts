// Every command and format with a board whose fields are named like Object.prototype's members: each name
// is a plain field, stored and shown under its exact name, over real HTTP against the emulator (and the
// import's mapping and --match-on against the independent alt server too). A plain object answers
// `card.toString` with its prototype's method, and `obj['__proto__'] = v` sets a prototype: the listings
// crashed on a card without those fields, and --match-on re-sent rows that equal their card.
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { ContextParts } from '../../src/context.js';
import type { StopSignal } from '../../src/interrupt.js';
import { startAltServer, type AltServer } from '../conformance/alt-server.js';
import { type CliResult, runMain, tempDir } from '../helpers/cli.js';
import { type RunningEmulator, startTestEmulator } from '../helpers/emulator.js';
import { waitFor } from '../helpers/wait.js';

/** The seven names, in the board's field order. */
const NAMES = ['toString', 'valueOf', 'hasOwnProperty', 'constructor', '__proto__', '__defineGetter__', 'isPrototypeOf'] as const;
const FIELDS = ['Name', ...NAMES];
const BOARD = 'b-names';
const TOKEN = 'tok-names-0123456789';
const KEY = 'sk-names-0123456789';

/** A value per name that no other name has, so a value under the wrong key shows. */
const value = (name: string, tag: string) => `${tag}:${name}`;

/** A record built from JSON text, so `__proto__` is an own key as it is in anything parsed from the wire. */
function own(entries: Array<[string, unknown]>): Record<string, unknown> {
  return JSON.parse(`{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(',')}}`) as Record<string, unknown>;
}

/** The row of `tag`: Name plus every name with its own value. */
const row = (tag: string) => own([['Name', tag], ...NAMES.map((n): [string, unknown] => [n, value(n, tag)])]);

let emu: RunningEmulator;
beforeAll(async () => {
  emu = await startTestEmulator({ boards: { [BOARD]: { token: TOKEN, fields: [...FIELDS], updateMode: 'Update if exists', createFields: false, webhookUrl: null, signingKey: KEY } } });
});
afterAll(() => emu.close());

const env = () => ({ CARDBOARD_BASE_URL: emu.url, CARDBOARD_BOARD: BOARD, CARDBOARD_TOKEN: TOKEN });
const run = (args: string[], opts: Parameters<typeof runMain>[1] = {}) => runMain(args, { env: env(), ...opts });
/** runMain with stdout a terminal 200 columns wide. */
const onTerminal = (args: string[]) => run(args, { context: (parts) => (Object.assign(parts.stdout!, { isTTY: true, columns: 200 }), {}) });

/** The card of that Name as the emulator holds it, as its JSON text would parse. */
function stored(name: string): Record<string, unknown> {
  const card = emu.state()[BOARD]!.cards.find((c) => Object.hasOwn(c, 'Name') && c.Name === name);
  expect(card, `card ${name}`).toBeDefined();
  return JSON.parse(JSON.stringify(card)) as Record<string, unknown>;
}

/** Every name is an own key of `card` holding the value of `tag`. */
function expectRow(card: Record<string, unknown>, tag: string) {
  for (const n of NAMES) {
    expect(Object.hasOwn(card, n), `own key ${n}`).toBe(true);
    expect(card[n], n).toBe(value(n, tag));
  }
}

function ok(r: CliResult) {
  expect(r.stderr).not.toMatch(/This is a bug|TypeError/);
  expect(r.code, r.stderr).toBe(0);
}

/** A listener stopped by the SIGTERM `listen` sends: it wound down cleanly, and main names 143 (the process would end by it). */
function stopped(r: CliResult) {
  expect(r.stderr).not.toMatch(/This is a bug|TypeError/);
  expect(r.code, r.stderr).toBe(143);
}

/** A put of `tag` by pairs; returns the new card's id. */
async function putPairs(tag: string): Promise<string> {
  const r = await run(['card', 'put', `Name=${tag}`, ...NAMES.map((n) => `${n}=${value(n, tag)}`)]);
  ok(r);
  return r.stdout.trim();
}

describe('the emulator', () => {
  it('--seed-cards fills every name as an own key', async () => {
    const e = await startTestEmulator({ boards: { [BOARD]: { token: TOKEN, fields: [...FIELDS] } }, seedCards: 2 });
    onTestFinished(() => e.close());
    const cards = JSON.parse(JSON.stringify(e.state()[BOARD]!.cards)) as Record<string, unknown>[];
    expect(cards.map((c) => NAMES.map((n) => Object.hasOwn(c, n) && c[n]))).toEqual([1, 2].map((i) => NAMES.map((n) => `${n} ${i}`)));
  });
});

describe('schema', () => {
  it('lists the seven names, piped and as JSON', async () => {
    const piped = await run(['schema']);
    ok(piped);
    expect(piped.stdout.split('\n').slice(1, -1).map((l) => l.split('\t')[0])).toEqual(FIELDS);
    const json = await run(['schema', '--json']);
    ok(json);
    expect((JSON.parse(json.stdout) as { name: string }[]).map((f) => f.name)).toEqual(FIELDS);
  });
});

describe('card put and card get', () => {
  it('Field=value pairs store each value under its exact name', async () => {
    const id = await putPairs('pairs');
    const card = stored('pairs');
    expect(card._id).toBe(id);
    expectRow(card, 'pairs');
    expect(Object.keys(card).sort()).toEqual(['_id', ...FIELDS].sort());
  });

  it('--data JSON stores each value under its exact name', async () => {
    const r = await run(['card', 'put', '--data', JSON.stringify(row('data'))]);
    ok(r);
    expectRow(stored('data'), 'data');
  });

  it('an update by _id changes only the names given', async () => {
    const id = await putPairs('upd');
    const r = await run(['card', 'put', `_id=${id}`, '__proto__=changed', 'constructor=changed too']);
    ok(r);
    const card = stored('upd');
    expect([card.__proto__, card.constructor, card.toString]).toEqual(['changed', 'changed too', value('toString', 'upd')]);
  });

  it('card get prints every name: piped (ndjson and tsv), --json and on a terminal', async () => {
    const id = await putPairs('get');
    const piped = await run(['card', 'get', id]);
    ok(piped);
    expectRow(JSON.parse(piped.stdout) as Record<string, unknown>, 'get');
    const tsv = await run(['card', 'get', id, '--format', 'table']);
    ok(tsv);
    for (const n of NAMES) expect(tsv.stdout).toContain(`${n}\t${value(n, 'get')}\n`);
    const json = await run(['card', 'get', id, '--json']);
    ok(json);
    expectRow(JSON.parse(json.stdout) as Record<string, unknown>, 'get');
    const table = await onTerminal(['card', 'get', id]);
    ok(table);
    for (const n of NAMES) expect(table.stdout).toMatch(new RegExp(`^${n.replace(/\$/g, '\\$')} {2,}${value(n, 'get')}$`, 'm'));
  });
});

describe('card list', () => {
  beforeAll(async () => {
    await putPairs('list');
    // A card without the seven: its cells are empty, never Object.prototype's members.
    ok(await run(['card', 'put', 'Name=bare']));
  });
  const listed = (records: Record<string, unknown>[]) => records.find((c) => c.Name === 'list')!;

  it('json and ndjson keep every name', async () => {
    const json = await run(['card', 'list', '--format', 'json']);
    ok(json);
    expectRow(listed(JSON.parse(json.stdout) as Record<string, unknown>[]), 'list');
    const nd = await run(['card', 'list', '--format', 'ndjson']);
    ok(nd);
    expectRow(listed(nd.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>)), 'list');
  });

  it('csv has a column per name with its value', async () => {
    const r = await run(['card', 'list', '--format', 'csv']);
    ok(r);
    const rows = parse(r.stdout, { columns: true }) as Record<string, string>[];
    expect(Object.keys(rows[0]!)).toEqual(['_id', ...FIELDS]);
    expectRow(listed(rows), 'list');
    expect(rows.find((c) => c.Name === 'bare')).toEqual({ ...own(NAMES.map((n) => [n, ''])), _id: expect.any(String), Name: 'bare' });
  });

  it('piped (tab-separated) has a column per name with its value', async () => {
    const r = await run(['card', 'list', '--format', 'table']);
    ok(r);
    const [head, ...lines] = r.stdout.slice(0, -1).split('\n');
    expect(head!.split('\t')).toEqual(['_id', ...FIELDS]);
    const cells = lines.map((l) => l.split('\t')).find((c) => c[1] === 'list')!;
    expect(cells.slice(2)).toEqual(NAMES.map((n) => value(n, 'list')));
    expect(lines.map((l) => l.split('\t')).find((c) => c[1] === 'bare')!.slice(2)).toEqual(NAMES.map(() => ''));
  });

  it('on a terminal, a table with a column per name and its value', async () => {
    const r = await onTerminal(['card', 'list', '--fields', ['Name', ...NAMES].join(',')]);
    ok(r);
    const line = r.stdout.split('\n').find((l) => l.includes(' list '))!;
    for (const n of NAMES) expect(r.stdout).toContain(n);
    for (const n of NAMES) expect(line).toContain(value(n, 'list'));
    // The cells after Name are empty: the line ends at `bare` (a table line never ends in spaces).
    const bare = r.stdout.split('\n').find((l) => / bare( |$)/.test(l))!;
    expect(bare).toMatch(/^\S+ +bare$/);
    const whole = await onTerminal(['card', 'list']);
    ok(whole);
    expect(whole.stdout).toContain('__proto__');
  });

  it('--fields picks names in every format', async () => {
    const fields = ['__proto__', 'toString', 'valueOf', 'constructor'];
    const nd = await run(['card', 'list', '--fields', fields.join(','), '--format', 'ndjson']);
    ok(nd);
    const rec = nd.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>).find((c) => Object.values(c).includes(value('toString', 'list')))!;
    expect(Object.keys(rec)).toEqual(['_id', ...fields]);
    for (const f of fields) expect(rec[f]).toBe(value(f, 'list'));
    const bare = nd.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>).find((c) => !Object.hasOwn(c, 'toString'))!;
    expect(Object.keys(bare)).toEqual(['_id']);
    const csv = await run(['card', 'list', '--fields', fields.join(','), '--format', 'csv']);
    ok(csv);
    expect(csv.stdout.split('\r\n')[0]).toBe(`_id,${fields.join(',')}`);
    expect(csv.stdout).toContain(fields.map((f) => value(f, 'list')).join(','));
    const tsv = await run(['card', 'list', '--fields', fields.join(','), '--format', 'table']);
    ok(tsv);
    expect(tsv.stdout).toContain(fields.map((f) => value(f, 'list')).join('\t'));
  });
});

/** A board to import into: the emulator's or the alt server's, with its cards and POSTs as the server saw them. */
interface Target {
  name: string;
  env: Record<string, string>;
  /** The cards, as their JSON text would parse. */
  cards(): Record<string, unknown>[];
  posts(): number;
}

async function emulatorTarget(): Promise<Target> {
  const e = await startTestEmulator({ boards: { [BOARD]: { token: TOKEN, fields: [...FIELDS], updateMode: 'Update if exists', createFields: false, webhookUrl: null, signingKey: KEY } } });
  onTestFinished(() => e.close());
  return {
    name: 'emulator',
    env: { CARDBOARD_BASE_URL: e.url, CARDBOARD_BOARD: BOARD, CARDBOARD_TOKEN: TOKEN },
    cards: () => JSON.parse(JSON.stringify(e.state()[BOARD]!.cards)) as Record<string, unknown>[],
    posts: () => e.requests().filter((q) => q.method === 'POST').length,
  };
}

async function altTarget(): Promise<Target> {
  const alt: AltServer = await startAltServer({ pageSize: 3 }, FIELDS.map((name) => ({ name, uuid: randomUUID() })));
  onTestFinished(() => alt.close());
  return {
    name: 'alt server',
    env: { CARDBOARD_BASE_URL: alt.url, CARDBOARD_BOARD: alt.opts.boardId, CARDBOARD_TOKEN: alt.opts.token },
    cards: () => JSON.parse(JSON.stringify(alt.cards)) as Record<string, unknown>[],
    posts: () => alt.requests.filter((q) => q.method === 'POST').length,
  };
}

const TARGETS: Array<[string, () => Promise<Target>]> = [
  ['emulator', emulatorTarget],
  ['alt server', altTarget],
];

/** A CSV file in a fresh directory. */
function csvFile(text: string): string {
  const file = join(tempDir('cardboard-names-'), 'in.csv');
  writeFileSync(file, text);
  return file;
}

/**
 * Rows a..c with every name, row d with every other name empty (omitted from its body), row e with only `keep`:
 * a card lacking a name must not differ from its row by the member it inherits.
 */
function namesCsv(keep = 'valueOf'): string {
  const lines = [FIELDS.join(',')];
  for (const tag of ['a', 'b', 'c']) lines.push([tag, ...NAMES.map((n) => value(n, tag))].join(','));
  lines.push(['d', ...NAMES.map((n, i) => (i % 2 === 0 ? '' : value(n, 'd')))].join(','));
  lines.push(['e', ...NAMES.map((n) => (n === keep ? value(n, 'e') : ''))].join(','));
  return `${lines.join('\n')}\n`;
}

const importJson = (t: Target, args: string[]) => runMain(['import', ...args, '--json'], { env: t.env });

function summary(r: CliResult): Record<string, unknown> {
  ok(r);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

const byName = (t: Target, name: string) => t.cards().find((c) => c.Name === name)!;

describe.each(TARGETS)('import against the %s', (_label, target) => {
  it('maps each column to the field of its own name; the results file has every row', async () => {
    const t = await target();
    const file = csvFile(namesCsv());
    const results = join(tempDir(), 'results.csv');
    expect(summary(await importJson(t, [file, '--results', results]))).toMatchObject({ created: 5, rejected: 0 });
    for (const tag of ['a', 'b', 'c']) expectRow(byName(t, tag), tag);
    const d = byName(t, 'd');
    NAMES.forEach((n, i) => expect(Object.hasOwn(d, n), n).toBe(i % 2 !== 0));
    expect((parse(readFileSync(results), { columns: true }) as { state: string }[]).map((r) => r.state)).toEqual(Array(5).fill('created'));
  });

  it('--map and --map-file send a column to another of the names (a swap of __proto__ and constructor)', async () => {
    const t = await target();
    const headers = ['Name', 'constructor', '__proto__', 'toString', 'valueOf'];
    const file = csvFile(`${headers.join(',')}\nm,to-proto,to-constructor,to-valueOf,to-toString\n`);
    const r = await importJson(t, [file, '--map', 'constructor=__proto__', '--map', '__proto__=constructor']
      .concat(['--map-file', mapFile('{"toString":"valueOf","valueOf":"toString"}')]));
    expect(summary(r)).toMatchObject({ created: 1 });
    const card = byName(t, 'm');
    expect([card.__proto__, card.constructor, card.valueOf, card.toString]).toEqual(['to-proto', 'to-constructor', 'to-valueOf', 'to-toString']);
    expect(Object.keys(card).filter((k) => (NAMES as readonly string[]).includes(k)).sort()).toEqual(['__proto__', 'constructor', 'toString', 'valueOf']);
  });

  it('--type on such a field converts its cells; a bad cell goes to the rejects file under its own column', async () => {
    const t = await target();
    const file = csvFile('Name,constructor,__proto__\nt1,42,true\nt2,x,false\n');
    const rejects = join(tempDir(), 'rejects.csv');
    const r = await importJson(t, [file, '--type', 'constructor=number', '--type', '__proto__=boolean', '--rejects', rejects]);
    expect(r.code).toBe(3);
    expect(JSON.parse(r.stdout)).toMatchObject({ created: 1, rejected: 1 });
    const card = byName(t, 't1');
    expect([card.constructor, card.__proto__]).toEqual([42, true]);
    const rows = parse(readFileSync(rejects), { columns: true }) as Record<string, string>[];
    expect(rows).toHaveLength(1);
    expect(JSON.parse(JSON.stringify(rows[0]))).toMatchObject(own([['Name', 't2'], ['constructor', 'x'], ['__proto__', 'false']]));
  });

  it.each(['__proto__', 'constructor', 'toString'])('--match-on %s: a second import of the same file is all unchanged and sends no POST', async (field) => {
    const t = await target();
    // A card without the key field: the index must not give it Object.prototype's member as a key.
    ok(await runMain(['card', 'put', 'Name=keyless'], { env: t.env }));
    const file = csvFile(namesCsv(field).split('\n').filter((l) => !l.startsWith('d,')).join('\n'));
    expect(summary(await importJson(t, [file, '--match-on', field]))).toMatchObject({ created: 4, unchanged: 0 });
    const before = t.posts();
    expect(summary(await importJson(t, [file, '--match-on', field]))).toMatchObject({ rows: 4, created: 0, updated: 0, unchanged: 4 });
    expect(t.posts()).toBe(before);
    expect(t.cards()).toHaveLength(5);
  });

  it('--dry-run --match-on names the changes of such a field, and NDJSON input maps its keys by own name', async () => {
    const t = await target();
    const file = csvFile(namesCsv());
    expect(summary(await importJson(t, [file, '--match-on', 'Name']))).toMatchObject({ created: 5 });
    const edited = csvFile(namesCsv().replace(value('__proto__', 'b'), 'new proto').replace(value('constructor', 'd'), 'new constructor'));
    const plan = summary(await importJson(t, [edited, '--match-on', 'Name', '--dry-run']));
    expect(plan).toMatchObject({ updated: 2, unchanged: 3 });
    const changes = (plan.changes as { changes: { field: string; from: string; to: string }[] }[]).map((c) => c.changes);
    expect(changes).toEqual(
      expect.arrayContaining([
        [{ field: '__proto__', from: value('__proto__', 'b'), to: 'new proto' }],
        [{ field: 'constructor', from: value('constructor', 'd'), to: 'new constructor' }],
      ]),
    );
    const nd = join(tempDir(), 'in.ndjson');
    writeFileSync(nd, `${JSON.stringify(row('nd'))}\n${JSON.stringify(own([['Name', 'nd2'], ['__proto__', { nested: true }], ['constructor', 7]]))}\n`);
    expect(summary(await importJson(t, [nd]))).toMatchObject({ created: 2 });
    expectRow(byName(t, 'nd'), 'nd');
    expect([byName(t, 'nd2').__proto__, byName(t, 'nd2').constructor]).toEqual([{ nested: true }, 7]);
  });

  it('--match-on: a row with empty cells is unchanged against the card it made, and an edited row is an update', async () => {
    const t = await target();
    const file = csvFile(namesCsv());
    expect(summary(await importJson(t, [file, '--match-on', 'Name']))).toMatchObject({ created: 5 });
    const before = t.posts();
    expect(summary(await importJson(t, [file, '--match-on', 'Name']))).toMatchObject({ unchanged: 5 });
    expect(t.posts()).toBe(before);
    const edited = csvFile(namesCsv().replace(value('__proto__', 'b'), 'new proto'));
    expect(summary(await importJson(t, [edited, '--match-on', 'Name']))).toMatchObject({ updated: 1, unchanged: 4 });
    expect(byName(t, 'b').__proto__).toBe('new proto');
    expect(t.cards()).toHaveLength(5);
  });
});

/** A --map-file with this JSON text (as written: `__proto__` an own key). */
function mapFile(text: string): string {
  const file = join(tempDir(), 'map.json');
  writeFileSync(file, text);
  return file;
}

/**
 * `webhook listen` run in-process with the emulator's board pointed at it (stdout a terminal unless --json):
 * `act` runs once it listens, then a stop signal ends it. Returns the run's result.
 */
async function listen(args: string[], act: (out: () => string) => Promise<void>): Promise<CliResult> {
  let stop: ((s: StopSignal) => void) | undefined;
  let ctx: ContextParts | undefined;
  const running = run(['webhook', 'listen', '--port', '0', ...args], {
    env: { ...env(), CARDBOARD_SIGNING_KEY: KEY },
    context: (c) => {
      ctx = c;
      if (!args.includes('--json')) Object.assign(c.stdout!, { isTTY: true, columns: 200 });
      return { signals: { listen: (l: (s: StopSignal) => void) => ((stop = l), () => (stop = undefined)), exitNow: () => {} } };
    },
  });
  const text = (s: 'stdout' | 'stderr') => (ctx?.[s] as unknown as { text: string } | undefined)?.text ?? '';
  await waitFor(() => /Listening on (\S+)/.test(text('stderr')));
  emu.boards[BOARD]!.webhookUrl = /Listening on (\S+)/.exec(text('stderr'))![1]!;
  try {
    await act(() => text('stdout'));
  } finally {
    emu.boards[BOARD]!.webhookUrl = null;
    stop?.('SIGTERM');
  }
  return running;
}

describe('webhook listen and replay', () => {
  it('a line per delivery shows the names and their values', async () => {
    const r = await listen([], async (out) => {
      const id = await putPairs('hook-line');
      await waitFor(() => out().includes(id));
    });
    stopped(r);
    expect(r.stdout).toMatch(new RegExp(`card \\S+  new card  Name=hook-line  toString=hook-line:toString  valueOf=hook-line:valueOf  hasOwnProperty=hook-line:hasOwnProperty  \\+4 more  \\d+ B`));
  });

  it('--json and the record file keep every name as an own key', async () => {
    const record = join(tempDir(), 'hooks.jsonl');
    const r = await listen(['--json', '--record', record], async (out) => {
      await putPairs('hook-json');
      await waitFor(() => out().includes('hook-json'));
    });
    stopped(r);
    const body = (JSON.parse(r.stdout.trim()) as { body: Record<string, unknown> }).body;
    expectRow(body, 'hook-json');
    const recorded = JSON.parse(readFileSync(record, 'utf8').trim()) as { body: Record<string, unknown> };
    expectRow(recorded.body, 'hook-json');
  });

  it('headers named like the members are kept by --json, the record file and replay', async () => {
    const record = join(tempDir(), 'hooks.jsonl');
    const r = await listen(['--json', '--record', record], async (out) => {
      const url = emu.boards[BOARD]!.webhookUrl!;
      // A flat list: an object literal with a `__proto__` key would set its prototype, not a header.
      const res = await request(url, { method: 'POST', body: '{"_id":"h1"}', headers: ['content-type', 'application/json', 'x-signingKey', KEY, '__proto__', 'hp', 'constructor', 'hc', 'toString', 'ht'] });
      await res.body.dump();
      expect(res.statusCode).toBe(200);
      await waitFor(() => out().includes('h1'));
    });
    stopped(r);
    const shown = (JSON.parse(r.stdout.trim()) as { headers: Record<string, string> }).headers;
    expect([Object.hasOwn(shown, '__proto__'), shown.__proto__, shown.constructor, shown.toString]).toEqual([true, 'hp', 'hc', 'ht']);
    const got: Array<Record<string, string | string[] | undefined>> = [];
    const app = createServer((req, res) => {
      got.push(req.headersDistinct as Record<string, string[]>);
      req.resume().on('end', () => res.end('ok'));
    });
    app.listen(0, '127.0.0.1');
    await once(app, 'listening');
    onTestFinished(() => void app.close());
    const replay = await runMain(['webhook', 'replay', record, '--to', `http://127.0.0.1:${(app.address() as AddressInfo).port}/`], { env: { CARDBOARD_SIGNING_KEY: KEY } });
    ok(replay);
    expect(got).toHaveLength(1);
    expect([got[0]!['__proto__'], got[0]!.constructor, got[0]!.tostring]).toEqual([['hp'], ['hc'], ['ht']]);
  });

  it.each(['__proto__', 'constructor', 'toString'])('replay --filter %s=value keeps the cards with that own value', async (field) => {
    const record = join(tempDir(), 'hooks.jsonl');
    const tags = ['r1', 'r2', 'r3'];
    const r = await listen(['--record', record], async (out) => {
      for (const tag of tags) await putPairs(tag);
      // And a card without the field: `--filter` must not match what it inherits.
      ok(await run(['card', 'put', 'Name=r4']));
      await waitFor(() => out().split('\n').filter((l) => l.includes('  card ')).length === 4);
    });
    stopped(r);
    const got: string[] = [];
    const app = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        got.push(body);
        res.end('ok');
      });
    });
    app.listen(0, '127.0.0.1');
    await once(app, 'listening');
    onTestFinished(() => void app.close());
    const to = `http://127.0.0.1:${(app.address() as AddressInfo).port}/`;
    const replay = await runMain(['webhook', 'replay', record, '--to', to, '--filter', `${field}=${value(field, 'r2')}`], { env: { CARDBOARD_SIGNING_KEY: KEY } });
    ok(replay);
    expect(got.map((b) => (JSON.parse(b) as { Name: string }).Name)).toEqual(['r2']);
    expectRow(JSON.parse(got[0]!) as Record<string, unknown>, 'r2');
    const none = await runMain(['webhook', 'replay', record, '--to', to, '--filter', `${field}=${String(Object.prototype[field as keyof object])}`], { env: { CARDBOARD_SIGNING_KEY: KEY } });
    expect(none.code).toBe(0);
    expect(got).toHaveLength(1);
  });
});
