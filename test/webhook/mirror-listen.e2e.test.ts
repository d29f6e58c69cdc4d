// `webhook listen --mirror` end to end: the built binary receives the emulator's own deliveries over HTTP
// and keeps the board's mirror, on each engine, read back here by a client other than cardboard's: the
// cards as the server has them, a delete that removes one, an undocumented body kept and counted but
// changing no card, no secret in the mirror, change lines against the mirror after a restart without a
// record file, nothing acknowledged lost to kill -9, and a mirror that cannot be written answered 500 (the
// emulator sends it again once it can).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { runMain, tempDir } from '../helpers/cli.js';
import { BOARD_ID, type RunningEmulator, SIGNING_KEY, startTestEmulator, TOKEN } from '../helpers/emulator.js';
import { absent, type Engine, ENGINES } from '../helpers/engines.js';
import { startOnPty } from '../helpers/pty.js';
import { waitFor } from '../helpers/wait.js';
import { post, type RunningListener, startListener } from './helpers.js';

const cleanup: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

type Row = Record<string, unknown>;

interface Setup {
  emu: RunningEmulator;
  engine: Engine;
  db: string;
  env: Record<string, string>;
}

/** The mirror's cards by `_id`, as a client other than cardboard's reads them. */
async function mirroredCards(s: Setup): Promise<Map<string, Row>> {
  return new Map(Object.entries(await s.engine.cards(s.db)));
}

async function setup(engine: Engine): Promise<Setup> {
  const emu = await startTestEmulator();
  cleanup.push(() => emu.close());
  const db = engine.name === 'sqlite' ? join(tempDir(), 'board.db') : await engine.mirror();
  return { emu, engine, db, env: { CARDBOARD_BASE_URL: emu.url, CARDBOARD_BOARD: BOARD_ID, CARDBOARD_TOKEN: TOKEN, CARDBOARD_SIGNING_KEY: SIGNING_KEY, CARDBOARD_MIRROR: db } };
}

async function listen(s: Setup, args: string[] = []): Promise<RunningListener> {
  const l = await startListener(['--mirror', '--json', ...args], { env: s.env });
  cleanup.push(() => l.stop('SIGKILL'));
  s.emu.boards[BOARD_ID]!.webhookUrl = l.url;
  return l;
}

async function putCard(s: Setup, fields: string[]): Promise<string> {
  const r = await runMain(['card', 'put', ...fields, '--json'], { env: s.env });
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { _id: string })._id;
}

/** Wait until the emulator has delivered every webhook it queued (each answered 200). */
async function delivered(s: Setup, n: number): Promise<void> {
  await waitFor(() => {
    const w = s.emu.state()[BOARD_ID]!.webhooks;
    return w.pending === 0 && w.delivered >= n;
  }, { what: () => `${n} webhooks delivered: ${JSON.stringify(s.emu.state()[BOARD_ID]!.webhooks)}` });
}

function deliveryLines(l: RunningListener): Row[] {
  return l.stdout().split('\n').filter(Boolean).map((line) => JSON.parse(line) as Row);
}

describe.each(ENGINES)('webhook listen --mirror ($name)', (engine) => {
  if (absent(engine)) return;

  it('keeps the cards as the server has them; a delete removes one; an undocumented body is kept and counted, changing no card', async () => {
    const s = await setup(engine);
    const l = await listen(s);
    await l.waitFor(new RegExp(`mirror ${s.db.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} before its 200`));
    const a = await putCard(s, ['Name=Fix login', 'Status=Open']);
    const b = await putCard(s, ['Name=Ship it', 'Status=Open', 'Owner=Bo']);
    await putCard(s, ['--id', a, 'Status=Done', 'Owner=Ada']);
    await putCard(s, ['Name=Third']);
    await delivered(s, 4);
    const server = new Map(s.emu.state()[BOARD_ID]!.cards.map((card) => [card._id, card as Row]));
    expect(server.size).toBe(3);
    expect((await mirroredCards(s))).toEqual(server);
    // A listener feeds the mirror: its sign of life is there while it runs.
    expect(await engine.rows(s.db, 'SELECT count(*) FROM listener')).toEqual([[1]]);

    expect(await post(l.url, JSON.stringify({ event: 'card.deleted', card: { _id: b } }), SIGNING_KEY)).toBe(200);
    const upload = JSON.stringify({ event: 'file.uploaded', cardId: a, data: { fileName: 'a.png', Status: 'Gone' } });
    expect(await post(l.url, upload, SIGNING_KEY)).toBe(200);
    expect(await post(l.url, 'not json at all', SIGNING_KEY)).toBe(200);
    // A delete that names no card: placed nowhere, never guessed.
    expect(await post(l.url, JSON.stringify({ event: 'card.deleted', data: { Name: 'Third' } }), SIGNING_KEY)).toBe(200);
    server.delete(b);
    expect((await mirroredCards(s))).toEqual(server);
    const unplaced = await engine.rows(s.db, "SELECT name, card_id, body FROM deliveries WHERE kind = 'unplaced' ORDER BY seq");
    expect(unplaced).toEqual([
      ['file.uploaded', a, upload],
      [null, null, 'not json at all'],
      ['card.deleted', null, JSON.stringify({ event: 'card.deleted', data: { Name: 'Third' } })],
    ]);
    const stopped = await l.stop('SIGINT');
    expect(stopped.signal).toBe('SIGINT');
    expect(stopped.stderr).toContain('stopped: 8 delivered, 0 refused, 5 applied to the mirror, 3 unplaced');
    // Gone from the mirror once stopped.
    expect(await engine.rows(s.db, 'SELECT * FROM listener')).toEqual([]);
  });

  it('holds neither the signing key nor the token, however a body spells them', async () => {
    const s = await setup(engine);
    const l = await listen(s);
    const escaped = (secret: string) => secret.replace('-', '\\u002d');
    expect(await post(l.url, `{"_id":"s1","Note":"key ${SIGNING_KEY} token ${TOKEN}","Esc":"${escaped(SIGNING_KEY)}","${escaped(TOKEN)}":"x"}`, SIGNING_KEY)).toBe(200);
    expect(await post(l.url, `{"hello":"${escaped(TOKEN)}","plain":"${SIGNING_KEY}"}`, SIGNING_KEY)).toBe(200);
    expect((await mirroredCards(s)).get('s1')).toEqual({ _id: 's1', Note: 'key *** token ***', Esc: '***', '***': 'x' });
    const tables = ['cards', 'deliveries', 'listener', 'fields', 'pulls', 'tombstones', engine.name === 'sqlite' ? 'meta' : 'boards'];
    const everything = JSON.stringify(await Promise.all(tables.map((t) => engine.rows(s.db, `SELECT * FROM ${t}`))));
    expect(everything).toContain('***');
    for (const secret of [SIGNING_KEY, TOKEN]) {
      expect(everything).not.toContain(secret);
      if (engine.name === 'sqlite') for (const file of [s.db, `${s.db}-wal`]) if (existsSync(file)) expect(readFileSync(file).includes(secret)).toBe(false);
    }
    await l.stop('SIGINT');
    if (engine.name === 'sqlite') for (const secret of [SIGNING_KEY, TOKEN]) expect(readFileSync(s.db).includes(secret)).toBe(false);
  });

  it('a listener restarted with no record file shows each change against the mirror', async () => {
    const s = await setup(engine);
    const first = await listen(s);
    const id = await putCard(s, ['Name=Fix login', 'Status=Open']);
    await delivered(s, 1);
    expect((await first.stop('SIGINT')).signal).toBe('SIGINT');

    // On a terminal, with no --record: the line compares against the mirror's card.
    const pty = startOnPty(['webhook', 'listen', '--port', '0', '--mirror'], s.env, { cols: 160 });
    cleanup.push(async () => {
      pty.type('\u0003');
      await pty.exit;
    });
    s.emu.boards[BOARD_ID]!.webhookUrl = (await pty.waitFor(/Listening on (\S+)/))[1]!;
    await putCard(s, ['--id', id, 'Status=Done']);
    await pty.waitFor(/#1 {2}POST \/ {2}card /);
    expect(pty.raw().replace(/\r/g, '')).toMatch(new RegExp(`#1  POST /  card ${id}  Status: Open → Done  \\d+ B\\n`));
    pty.type('\u0003');
    expect(await pty.ended).toEqual({ code: null, signal: 'SIGINT' });
  });

  it('loses no acknowledged delivery to kill -9 in a burst, and the emulator sends again what was not acknowledged', async () => {
    const s = await setup(engine);
    const l = await listen(s);
    const acked: string[] = [];
    const unanswered: string[] = [];
    let next = 0;
    const TOTAL = 2000;
    // 16 senders, one delivery at a time each; kill -9 lands after the 300th acknowledgement.
    const sender = async () => {
      while (next < TOTAL) {
        const id = `k${next++}`;
        try {
          const res = await request(l.url, { method: 'POST', body: JSON.stringify({ _id: id, N: id }), headers: { 'content-type': 'application/json', 'x-signingKey': SIGNING_KEY } });
          await res.body.dump();
          if (res.statusCode === 200) acked.push(id);
          else unanswered.push(id);
        } catch {
          unanswered.push(id);
        }
        if (acked.length === 300) l.child.kill('SIGKILL');
      }
    };
    await Promise.all(Array.from({ length: 16 }, sender));
    expect((await l.stop()).signal).toBe('SIGKILL');
    expect(unanswered.length).toBeGreaterThan(0);
    const kept = (await mirroredCards(s));
    expect(acked.filter((id) => !kept.has(id))).toEqual([]);
    expect(acked.length).toBeGreaterThanOrEqual(300);

    // A card changed while no listener runs: the emulator tries, fails, and tries again until one answers.
    const late = await putCard(s, ['Name=While down']);
    await waitFor(() => s.emu.state()[BOARD_ID]!.webhooks.attempts >= 2, { what: 'the emulator to retry' });
    await listen(s);
    await delivered(s, 1);
    const after = await mirroredCards(s);
    expect(after.get(late)).toEqual({ _id: late, Name: 'While down' });
    // The restarted listener keeps every delivery the killed one acknowledged.
    expect(acked.filter((id) => !after.has(id))).toEqual([]);
  });

  it('answers 500, not 200, while the mirror cannot be written, and applies the delivery when the emulator sends it again', async () => {
    const s = await setup(engine);
    const l = await listen(s);
    // The store's write fails: every insert into its deliveries log is refused.
    await engine.exec(s.db, {
      sqlite: "CREATE TRIGGER refuse BEFORE INSERT ON deliveries BEGIN SELECT RAISE(ABORT, 'refused by the test'); END",
      postgres: `CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$;
                 CREATE TRIGGER refuse BEFORE INSERT ON deliveries FOR EACH ROW EXECUTE FUNCTION refuse()`,
    });
    expect(await post(l.url, '{"_id":"x1","Status":"Open"}', SIGNING_KEY)).toBe(500);
    await l.waitFor(/cannot apply to the mirror: .*refused by the test/);
    expect((await mirroredCards(s)).has('x1')).toBe(false);
    const id = await putCard(s, ['Name=Retried', 'Status=Open']);
    await waitFor(() => s.emu.state()[BOARD_ID]!.webhooks.attempts >= 3, { what: 'the emulator to be answered 500 and retry' });
    expect(s.emu.state()[BOARD_ID]!.webhooks.delivered).toBe(0);
    await engine.exec(s.db, { sqlite: 'DROP TRIGGER refuse', postgres: 'DROP TRIGGER refuse ON deliveries' });
    await delivered(s, 1);
    expect((await mirroredCards(s)).get(id)).toEqual({ _id: id, Name: 'Retried', Status: 'Open' });
    // The line is printed after the 200, so the emulator may count the delivery before the line is read.
    await waitFor(() => deliveryLines(l).length > 0, { what: 'the delivery line on stdout' });
    expect(deliveryLines(l).map((d) => d.cardId)).toEqual([id]);
  });

  it('refuses --mirror without a board (exit 2), before listening', async () => {
    const r = await runMain(['webhook', 'listen', '--port', '0', '--mirror'], { env: { CARDBOARD_SIGNING_KEY: SIGNING_KEY } });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--mirror needs a board: no board selected/);
    expect(r.stderr).not.toContain('Listening on');
  });
});
