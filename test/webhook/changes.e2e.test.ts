// Deliveries as card changes, end to end: the built binary's `webhook listen` receives the emulator's own
// deliveries (a card created, then updated with `card put --id`) over HTTP, and shows each as what changed;
// a restarted listener goes on from its record file; `webhook replay --changed` sends only the deliveries
// that changed a field. Bodies the spec does not show (wrapped events, deletes, comments, partial cards) are
// posted as another server might send them.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runMain, tempDir } from '../helpers/cli.js';
import { BOARD_ID, type RunningEmulator, SIGNING_KEY, startTestEmulator, TOKEN } from '../helpers/emulator.js';
import { startOnPty } from '../helpers/pty.js';
import { post, type RunningListener, startListener, TestApp } from './helpers.js';

const cleanup: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

const KEY_ENV = { CARDBOARD_SIGNING_KEY: SIGNING_KEY };

async function emulator(): Promise<RunningEmulator> {
  const emu = await startTestEmulator();
  cleanup.push(() => emu.close());
  return emu;
}

async function listen(args: string[]): Promise<RunningListener> {
  const l = await startListener(args, { env: KEY_ENV });
  cleanup.push(() => l.stop('SIGKILL'));
  return l;
}

async function putCard(emu: RunningEmulator, fields: string[]): Promise<string> {
  const r = await runMain(['card', 'put', ...fields, '--json'], { env: { CARDBOARD_BASE_URL: emu.url, CARDBOARD_BOARD: BOARD_ID, CARDBOARD_TOKEN: TOKEN } });
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { _id: string })._id;
}

function lines(text: string): Array<Record<string, unknown>> {
  return text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** Wait until `n` JSON lines are on the listener's stdout. */
async function deliveries(l: RunningListener, n: number): Promise<Array<Record<string, unknown>>> {
  await l.waitFor(new RegExp(`(?:\\{"seq":\\d+[^\\n]*\\n){${n}}`), 'stdout');
  return lines(l.stdout());
}

describe('webhook listen: deliveries as card changes', () => {
  it("shows the emulator's deliveries as changes in --json, goes on from the record after a restart, and replay --changed sends only those", async () => {
    const emu = await emulator();
    const record = join(tempDir(), 'hooks.jsonl');
    const first = await listen(['--record', record, '--json']);
    emu.boards[BOARD_ID]!.webhookUrl = first.url;
    const id = await putCard(emu, ['Name=Fix login', 'Status=Open']);
    await deliveries(first, 1);
    await putCard(emu, ['--id', id, 'Status=Done', 'Owner=Ada']);
    await putCard(emu, ['--id', id, 'Priority=2']);
    const got = await deliveries(first, 3);
    expect(got.map((d) => [d.change, d.cardId, d.changes])).toEqual([
      ['new', id, [{ field: 'Name', after: 'Fix login' }, { field: 'Status', after: 'Open' }]],
      ['changed', id, [{ field: 'Status', before: 'Open', after: 'Done' }, { field: 'Owner', after: 'Ada' }]],
      ['changed', id, [{ field: 'Priority', after: '2' }]],
    ]);
    // The delivery itself is unchanged beside them.
    expect(got[1]).toMatchObject({ seq: 2, method: 'POST', body: { _id: id, Name: 'Fix login', Status: 'Done', Owner: 'Ada' } });
    expect((await first.stop('SIGINT')).signal).toBe('SIGINT');

    // A second run on the same record knows the card's last state.
    const second = await listen(['--record', record, '--json']);
    emu.boards[BOARD_ID]!.webhookUrl = second.url;
    await putCard(emu, ['--id', id, 'Status=Blocked']);
    const other = await putCard(emu, ['Name=Other', 'Owner=Bo']);
    const again = await deliveries(second, 2);
    expect(again.map((d) => [d.seq, d.change, d.cardId, d.changes])).toEqual([
      [4, 'changed', id, [{ field: 'Status', before: 'Done', after: 'Blocked' }]],
      [5, 'new', other, [{ field: 'Name', after: 'Other' }, { field: 'Owner', after: 'Bo' }]],
    ]);
    expect((await second.stop('SIGINT')).signal).toBe('SIGINT');
    // The record file holds deliveries only: changes are worked out again from it.
    expect(readFileSync(record, 'utf8')).not.toContain('"changes"');

    const app = new TestApp();
    await app.up();
    cleanup.push(() => app.down());
    const replay = await runMain(['webhook', 'replay', record, '--to', app.url, '--changed', 'Status', '--json'], { env: KEY_ENV });
    expect(replay.code, replay.stderr).toBe(0);
    // #1 (new: Status set), #2 (Open → Done), #4 (Done → Blocked); not #3 (Priority) nor #5 (no Status).
    expect(lines(replay.stdout).map((r) => r.seq)).toEqual([1, 2, 4]);
    expect(app.received.map((r) => (JSON.parse(r.body.toString()) as { Status: string }).Status)).toEqual(['Open', 'Done', 'Blocked']);
    // From #3, the change of #4 is still against #2's state (the file is read from #1).
    const from = await runMain(['webhook', 'replay', record, '--to', app.url, '--changed', 'Status', '--changed', 'Owner', '--from', '3', '--json'], { env: KEY_ENV });
    expect(from.code, from.stderr).toBe(0);
    expect(lines(from.stdout).map((r) => r.seq)).toEqual([4, 5]);
    // A field no delivery has is a typo, named with the nearest one (exit 2); nothing is sent.
    const sent = app.received.length;
    const typo = await runMain(['webhook', 'replay', record, '--to', app.url, '--changed', 'status'], { env: KEY_ENV });
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/--changed: .*'status'.*Status/);
    expect(app.received.length).toBe(sent);
  });

  it('prints changes on a terminal, and shows bodies the spec does not show (wrapped, partial, deletes, comments) as such', async () => {
    const pty = startOnPty(['webhook', 'listen', '--port', '0'], KEY_ENV, { cols: 160 });
    cleanup.push(async () => {
      pty.type('\u0003');
      await pty.exit;
    });
    const url = (await pty.waitFor(/Listening on (\S+)/))[1]!;
    const send = async (body: unknown) => expect(await post(url, JSON.stringify(body), SIGNING_KEY)).toBe(200);
    await send({ _id: 'JShpBx', Name: 'Fix login', Status: 'Open' });
    await send({ event: 'card.updated', data: { _id: 'JShpBx', Status: 'Done', Owner: 'Ada' } });
    // Only what changed: Name is not cleared.
    await send({ _id: 'JShpBx', Status: 'Done', Name: 'Fix login page' });
    await send({ _id: 'JShpBx', Status: 'Done' });
    await send({ event: 'comment.created', cardId: 'JShpBx', data: { id: 'm1', userId: 'u1', userName: 'Ada', content: 'Shipped <b>today</b>' } });
    await send({ event: 'card.deleted', card: { _id: 'JShpBx' } });
    await send({ _id: 'JShpBx', Status: 'Reopened' });
    await send([1, 2, 3]);
    await pty.waitFor(/#8 {2}POST \/ {2}json \[1,2,3\]/);
    pty.type('\u0003');
    expect(await pty.ended).toEqual({ code: null, signal: 'SIGINT' });
    const screen = pty.raw().replace(/\r/g, '');
    const shown = (seq: number) => new RegExp(`#${seq}  POST /  ([^\\n]*?)  \\d+ B\\n`).exec(screen)?.[1];
    expect([1, 2, 3, 4, 5, 6, 7, 8].map(shown)).toEqual([
      'card JShpBx  new card  Name=Fix login  Status=Open',
      'card JShpBx  Status: Open → Done  Owner: — → Ada',
      'card JShpBx  Name: Fix login → Fix login page',
      'card JShpBx  no change',
      'comment on card JShpBx by Ada: "Shipped <b>today</b>"',
      'card JShpBx deleted (card.deleted)',
      'card JShpBx  new card  Status=Reopened',
      'json [1,2,3]',
    ]);
  });
});
