// The import against the independent server: other page size, 201 on create, other id shapes, extra card keys,
// a wrapped schema and gzip everywhere. Typed NDJSON in, --match-on sends only the drifted cards, then nothing.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Card } from '../../src/spec-types.js';
import { tempDir } from '../helpers/cli.js';
import { fillMirror, openTestMirror } from '../helpers/mirror.js';
import { run, seen, start } from './helpers.js';

const ROWS = Array.from({ length: 23 }, (_, i) => ({ Title: `Task ${i + 1}`, Status: i % 2 ? 'Open' : 'Done', Estimate: i * 1.5, Tags: ['a', i] }));

describe('import --match-on against the alt server', () => {
  it.each(['uuid', 'numeric', 'odd'] as const)('ids %s: drifted cards restored, the rest unchanged, then nothing sent', async (idStyle) => {
    const server = await start({ idStyle, pageSize: 7, createdStatus: 201, extraCardKeys: true, schemaWrapped: true, gzip: 'always', updateMode: 'Update if exists' });
    const file = join(tempDir(), 'tasks.ndjson');
    writeFileSync(file, `${ROWS.map((r) => JSON.stringify(r)).join('\n')}\n`);
    const args = ['import', file, '--match-on', 'Title', '--json'];
    const first = await run(server, args);
    expect(first.stderr).not.toMatch(/^error/m);
    expect(JSON.parse(first.stdout)).toMatchObject({ rows: 23, created: 23 });
    expect(server.cards).toHaveLength(23);

    // Drift: two cards edited on the board, one of them to a value of another type.
    server.cards.find((c) => c.Title === 'Task 4')!.Status = 'Blocked';
    server.cards.find((c) => c.Title === 'Task 9')!.Estimate = '12';
    const posted = seen(server, 'POST').length;
    const second = await run(server, args);
    expect(JSON.parse(second.stdout)).toMatchObject({ rows: 23, created: 0, updated: 2, unchanged: 21 });
    expect(seen(server, 'POST').length - posted).toBe(2);
    expect(server.cards).toHaveLength(23);
    expect(server.cards.find((c) => c.Title === 'Task 4')?.Status).toBe(ROWS[3]!.Status);
    expect(server.cards.find((c) => c.Title === 'Task 9')?.Estimate).toBe(ROWS[8]!.Estimate);

    const third = await run(server, args);
    expect(JSON.parse(third.stdout)).toMatchObject({ rows: 23, unchanged: 23 });
    expect(seen(server, 'POST').length - posted).toBe(2);
  });
});

describe('import --match-on --mirror against the alt server', () => {
  it('a fresh mirror: the drifted cards only, no page read; a second run right after sends nothing', async () => {
    const server = await start({ idStyle: 'numeric', pageSize: 7, createdStatus: 201, extraCardKeys: true, schemaWrapped: true, gzip: 'always', updateMode: 'Update if exists' });
    const env = { CARDBOARD_MIRROR: join(tempDir(), 'alt.db') };
    const file = join(tempDir(), 'tasks.ndjson');
    writeFileSync(file, `${ROWS.map((r) => JSON.stringify(r)).join('\n')}\n`);
    const args = ['import', file, '--match-on', 'Title', '--json'];
    expect(JSON.parse((await run(server, args)).stdout)).toMatchObject({ created: 23 });
    const board = { baseUrl: server.url, id: server.opts.boardId };
    const now = new Date().toISOString();
    await fillMirror(env, board, server.cards as Card[], { at: now });

    server.cards.find((c) => c.Title === 'Task 4')!.Status = 'Blocked';
    server.cards.find((c) => c.Title === 'Task 9')!.Estimate = '12';
    // The mirror was told of the drift (as a listener would have been).
    const told = await openTestMirror(env, board, false);
    told.applyDeliveries(['Task 4', 'Task 9'].map((t) => ({ kind: 'card' as const, receivedAt: now, card: server.cards.find((c) => c.Title === t) as Card })));
    told.close();
    const pages = () => server.requests.filter((r) => r.method === 'GET' && /\/api\/aptlet\/[^/?]+(\?|$)/.test(r.url)).length;
    const [posted, read] = [seen(server, 'POST').length, pages()];
    const second = await run(server, [...args, '--mirror'], { env });
    expect(JSON.parse(second.stdout)).toMatchObject({ rows: 23, created: 0, updated: 2, unchanged: 21, index: { from: 'mirror', cards: 23 } });
    expect(seen(server, 'POST').length - posted).toBe(2);
    expect(pages() - read).toBe(0);
    const third = await run(server, [...args, '--mirror', '--restart'], { env });
    expect(JSON.parse(third.stdout)).toMatchObject({ rows: 23, unchanged: 23 });
    expect(seen(server, 'POST').length - posted).toBe(2);
    expect(pages() - read).toBe(0);
    expect(server.cards).toHaveLength(23);
  });
});

describe('import memory against the alt server', () => {
  it('a re-run sends nothing; a board emptied under the same id (404s as HTML pages) makes the memory stale', async () => {
    const server = await start({ idStyle: 'numeric', prefix: '/svc/v2', pageSize: 4, createdStatus: 201, htmlNotFound: true, extraCardKeys: true });
    const file = join(tempDir(), 'tasks.csv');
    writeFileSync(file, 'Title,Status\nA,Open\nB,Open\nA,Open\n');
    expect(JSON.parse((await run(server, ['import', file, '--json'])).stdout)).toMatchObject({ rows: 3, created: 3 });
    const posted = seen(server, 'POST').length;
    const again = await run(server, ['import', file, '--json']);
    expect(JSON.parse(again.stdout)).toMatchObject({ rows: 3, created: 0, skipped: 3 });
    expect(again.stderr).toContain('; nothing to send');
    expect(seen(server, 'POST').length).toBe(posted);
    expect(server.cards).toHaveLength(3);

    server.cards.length = 0;
    const stale = await run(server, ['import', file, '--json']);
    expect(stale.stderr).toContain('are no longer on it');
    expect(JSON.parse(stale.stdout)).toMatchObject({ rows: 3, created: 3, skipped: 0 });
    expect(server.cards.map((c) => c.Title).sort()).toEqual(['A', 'A', 'B']);
  });
});

describe('errors a CI job reads, against the alt server', () => {
  it('a row the server refuses (400): its reason on stderr without --rejects; --dry-run exits 3 on an unreadable line, 0 when clean', async () => {
    const server = await start({ idStyle: 'numeric', createdStatus: 201 });
    const file = join(tempDir(), 'tasks.ndjson');
    writeFileSync(file, `${ROWS.slice(0, 3).map((r) => JSON.stringify(r)).join('\n')}\n`);
    expect((await run(server, ['import', file, '--dry-run'])).code).toBe(0);
    server.faults.push({ method: 'POST', status: 400, body: 'Estimate is out of range' });
    const r = await run(server, ['import', file, '--concurrency', '1']);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('error: 1 row rejected, 0 uncertain (the card may exist):\n  line 1: 400 Estimate is out of range\nhint: Pass --rejects FILE');
    const bad = join(tempDir(), 'bad.ndjson');
    writeFileSync(bad, `${JSON.stringify(ROWS[0])}\n{"Title": \n`);
    const dry = await run(server, ['import', bad, '--dry-run']);
    expect(dry.code).toBe(3);
    expect(dry.stderr).toContain('error: --dry-run: 1 row of 2 would be rejected; nothing was sent.');
    expect(seen(server, 'POST')).toHaveLength(3);
  });

  it('an NDJSON key that is no field of the alt server names NDJSON keys, not CSV columns', async () => {
    const server = await start();
    const file = join(tempDir(), 'tasks.ndjson');
    writeFileSync(file, `${JSON.stringify({ Title: 'a', 'Due date': '2024-01-01' })}\n`);
    const r = await run(server, ['import', file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("error: 1 NDJSON key matches no board field (names are case-sensitive); nothing was sent:\n  key 'Due date': no field of that name; closest is 'Due Date'");
    expect(seen(server, 'POST')).toHaveLength(0);
  });
});
