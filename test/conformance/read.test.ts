import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { ndjson, run, runOnPty, seen, start } from './helpers.js';

describe('schema against a server that wraps it and adds field properties', () => {
  it('tsv: name, uuid, then the extra properties; arrays and booleans as JSON', async () => {
    const s = await start();
    const r = await run(s, ['schema']);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('name\tuuid\ttype\trequired\toptions');
    expect(lines[1]).toBe(`Title\t${s.fields[0]!.uuid}\ttext\ttrue\t`);
    expect(lines[2]).toBe(`Status\t${s.fields[1]!.uuid}\tselect\tfalse\t["Open","Done"]`);
    expect(lines).toHaveLength(s.fields.length + 1);
  });

  it('--json prints the field array (the {"fields": [...]} wrapper unwrapped)', async () => {
    const s = await start();
    const r = await run(s, ['schema', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(s.fields);
  });

  it('a bare array works as well, under a path prefix', async () => {
    const s = await start({ schemaWrapped: false, prefix: '/svc/v2' });
    const r = await run(s, ['schema', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(s.fields);
    expect(s.requests[0]!.url).toBe('/svc/v2/api/aptlet/board-7/schema');
  });

  it('a server that keys the UUID as `id` (spec 2.3 does not name the key): no empty uuid column', async () => {
    const server = await start({}, [
      { name: 'Title', id: 'f0a5c2de-0000-4000-8000-000000000001', kind: 'text' } as never,
      { name: 'Status', id: 'f0a5c2de-0000-4000-8000-000000000002', kind: 'select' } as never,
    ]);
    const r = await run(server, ['schema']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('name\tid\tkind\nTitle\tf0a5c2de-0000-4000-8000-000000000001\ttext\nStatus\tf0a5c2de-0000-4000-8000-000000000002\tselect\n');
  });

  it('table on a real terminal', async () => {
    const s = await start();
    const r = await runOnPty(['schema'], { env: { CARDBOARD_BASE_URL: s.url, CARDBOARD_BOARD: s.opts.boardId, CARDBOARD_TOKEN: s.opts.token, NO_COLOR: '1' } });
    expect(r.code, r.screen).toBe(0);
    expect(r.screen).toMatch(/\bname {2,}uuid {2,}type {2,}required {2,}options\r?\n/);
    expect(r.screen).toMatch(new RegExp(`\\nDue Date {2,}${s.fields[2]!.uuid}  date\\r?\\n`));
    expect(r.screen).not.toContain(s.opts.token);
  });
});

describe('card get with ids of other shapes', () => {
  for (const idStyle of ['uuid', 'numeric', 'odd'] as const) {
    it(`${idStyle} ids: the id is sent encoded and the card comes back whole`, async () => {
      const s = await start({ idStyle });
      const [, id] = s.seed(3);
      const r = await run(s, ['card', 'get', id!, '--json']);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual(s.cards[1]);
      expect(seen(s, 'GET').at(-1)!.url).toBe(`/api/aptlet/board-7/card/${encodeURIComponent(id!)}`);
      // Piped: the card as one line of JSON, whole.
      const piped = await run(s, ['card', 'get', id!]);
      expect(piped.stdout).toBe(`${JSON.stringify(s.cards[1])}\n`);
      const tsv = await run(s, ['card', 'get', id!, '--format', 'table']);
      expect(tsv.stdout.split('\n')[0]).toBe(`_id\t${id}`);
      // Extra keys and non-string values of the card record (spec 2.2: not shown) are printed too.
      expect(tsv.stdout).toContain('\ncreatedAt\t2024-01-01T00:00:02.000Z\n');
      expect(tsv.stdout).toContain('\nEstimate\t1.5\n');
      expect(tsv.stdout).toContain('\nTags\t["x","t1"]\n');
      // csv has the columns of card list (the fields); the keys it leaves out are named on stderr, as there.
      const csv = await run(s, ['card', 'get', id!, '--format', 'csv']);
      expect(csv.stdout.split('\r\n')[0]).toBe('_id,Title,Status,Due Date,Estimate,Tags');
      expect(csv.stderr).toMatch(/^not shown \(not fields of the board\): createdAt, boardId; use --format json to see them/);
    });
  }

  it('"00123" stays a string', async () => {
    const s = await start({ idStyle: 'numeric' });
    s.seed(1);
    const r = await run(s, ['card', 'get', '00001', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)._id).toBe('00001');
  });
});

describe('card list --all across page sizes', () => {
  for (const pageSize of [1, 7, 100]) {
    it(`page size ${pageSize}: every card exactly once in ndjson, csv and json; stops at the first []`, async () => {
      const s = await start({ pageSize, idStyle: 'odd' });
      const ids = s.seed(15);
      const pages = Math.ceil(15 / pageSize) + 1;

      const nd = await run(s, ['card', 'list', '--all', '--format', 'ndjson']);
      expect(nd.code, nd.stderr).toBe(0);
      expect(ndjson(nd.stdout)).toEqual(s.cards);
      const gets = seen(s, 'GET').map((r) => r.url);
      expect(gets).toEqual(Array.from({ length: pages }, (_, i) => `/api/aptlet/board-7?page=${i}`));

      const csv = await run(s, ['card', 'list', '--all', '--format', 'csv']);
      expect(csv.code, csv.stderr).toBe(0);
      const rows = parse(csv.stdout) as string[][];
      expect(rows[0]).toEqual(['_id', 'Title', 'Status', 'Due Date', 'Estimate', 'Tags']);
      expect(rows.slice(1).map((row) => row[0])).toEqual(ids);
      expect(rows[2]).toEqual([ids[1], 'Card 2', 'Done', '2024-05-02', '1.5', '["x","t1"]']);
      expect(rows[1]![3]).toBe('');

      const json = await run(s, ['card', 'list', '--all', '--format', 'json']);
      expect(json.code, json.stderr).toBe(0);
      expect(JSON.parse(json.stdout)).toEqual(s.cards);
    });
  }

  it('--limit stops fetching pages once it has enough', async () => {
    const s = await start({ pageSize: 7 });
    s.seed(30);
    const r = await run(s, ['card', 'list', '--all', '--limit', '9', '--format', 'ndjson']);
    expect(r.code, r.stderr).toBe(0);
    expect(ndjson(r.stdout).map((c) => c._id)).toEqual(s.cards.slice(0, 9).map((c) => c._id));
    expect(seen(s, 'GET').map((q) => q.url)).toEqual(['/api/aptlet/board-7?page=0', '/api/aptlet/board-7?page=1']);
  });

  it('--page N asks for that zero-based page', async () => {
    const s = await start({ pageSize: 7 });
    s.seed(10);
    const r = await run(s, ['card', 'list', '--page', '1']);
    expect(r.code, r.stderr).toBe(0);
    expect(ndjson(r.stdout)).toEqual(s.cards.slice(7));
  });

  it('csv: keys the server adds to every card (spec 2.2: other fields not shown) are not a staleness warning', async () => {
    const s = await start();
    s.seed(3);
    const r = await run(s, ['card', 'list', '--all', '--format', 'csv']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('warning');
    expect(r.stderr).toBe('not shown (not fields of the board): createdAt, boardId; use --format json to see them, or `cardboard schema --refresh` if a field was just added\n');
    const quiet = await run(s, ['--quiet', 'card', 'list', '--all', '--format', 'csv']);
    expect(quiet.stderr).toBe('');
  });
});

describe('on a real terminal and with --verbose', () => {
  it('card list: a table with odd ids; card get: a field/value table', async () => {
    const s = await start({ idStyle: 'odd', pageSize: 2 });
    const ids = s.seed(3);
    const env = { CARDBOARD_BASE_URL: s.url, CARDBOARD_BOARD: s.opts.boardId, CARDBOARD_TOKEN: s.opts.token, NO_COLOR: '1' };
    const list = await runOnPty(['card', 'list', '--all'], { env });
    expect(list.code, list.screen).toBe(0);
    expect(list.screen).toMatch(/_id {2,}Title {2,}Status {2,}Due Date {2,}Estimate {2,}Tags\r?\n/);
    for (const id of ids) expect(list.screen).toContain(`\n${id}  `);
    const get = await runOnPty(['card', 'get', ids[1]!], { env });
    expect(get.code, get.screen).toBe(0);
    expect(get.screen).toMatch(/\nTags {2,}\["x","t1"\]\r?\n/);
    expect(get.screen).not.toContain(s.opts.token);
  });

  it('control characters in card values do not reach the terminal as escape sequences', async () => {
    const s = await start();
    s.cards.push({ _id: 'c1', Title: 'evil\u001b[2J\u001b]0;pwned\u0007', Status: 'Open' });
    const env = { CARDBOARD_BASE_URL: s.url, CARDBOARD_BOARD: s.opts.boardId, CARDBOARD_TOKEN: s.opts.token, NO_COLOR: '1' };
    for (const args of [['card', 'get', 'c1'], ['card', 'list']]) {
      const r = await runOnPty(args, { env });
      expect(r.code, r.screen).toBe(0);
      expect(r.screen).toContain('evil\\e[2J\\e]0;pwned\\a');
      expect(r.screen).not.toContain('\u001b[2J');
    }
  });

  it('--verbose logs each request and its status, never the token', async () => {
    const s = await start({ pageSize: 2, createdStatus: 201 });
    s.seed(3);
    const r = await run(s, ['--verbose', 'card', 'list', '--all', '--format', 'ndjson']);
    expect(r.code, r.stderr).toBe(0);
    const logged = r.stderr.split('\n').filter((l) => l.startsWith('[http] '));
    expect(logged.map((l) => l.replace(/ \(\d+ ms\)$/, ''))).toEqual([0, 1, 2].map((p) => `[http] GET ${s.url}/api/aptlet/board-7?page=${p} → 200`));
  });
});
