// `webhook listen --changed/--where` and one --forward-to per filter, end to end: the built binary, the
// emulator's real deliveries (card put) or signed POSTs, and two stand-in apps.
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basename, dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runMain, tempDir } from '../helpers/cli.js';
import { BOARD_ID, type RunningEmulator, SIGNING_KEY, startTestEmulator, TOKEN } from '../helpers/emulator.js';
import { waitFor } from '../helpers/wait.js';
import { emulatorPointingAt, inspectorHistory, keyedListener, post, type RunningListener, spawnCli, type TestApp, upApp } from './helpers.js';

let cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

const app = (): Promise<TestApp> => upApp(cleanup);

const listen = (args: string[], env: Record<string, string> = {}): Promise<RunningListener> => keyedListener(args, SIGNING_KEY, cleanup, env);


const boardEnv = (emu: RunningEmulator) => ({ CARDBOARD_BASE_URL: emu.url, CARDBOARD_BOARD: BOARD_ID, CARDBOARD_TOKEN: TOKEN });
const cli = (emu: RunningEmulator, args: string[]) => runMain(args, { env: boardEnv(emu) });

/** The cards' fields as each app received them, in order. */
const bodies = (target: TestApp) => target.received.map((r) => JSON.parse(r.body.toString()) as Record<string, string>);
/** The deliveries' seqs among --json lines (a forward try's line is `{"forward": …}`, without a seq). */
const seqsOf = (jsonLines: string) =>
  jsonLines
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { seq?: number })
    .filter((d) => d.seq !== undefined)
    .map((d) => d.seq);

describe('filters and routes: each kind of change to its URL', () => {
  it('answers and records every delivery, prints (--json) and forwards only what matches, each filter to its URL', async () => {
    const done = await app();
    const owners = await app();
    const record = join(tempDir(), 'hooks.jsonl');
    const listener = await listen(['--record', record, '--json', '--forward-to', done.url, '--where', 'Status=Done', '--forward-to', owners.url, '--changed', 'Owner']);
    await listener.waitFor(/Forwarding to .*--changed Owner/);
    expect(listener.stderr()).toContain(`Forwarding to ${done.url} what matches --where Status=Done (timeout 30s).`);
    const emu = await emulatorPointingAt(listener.url, cleanup);
    const put = async (args: string[]) => {
      const r = await cli(emu, ['card', 'put', ...args]);
      expect(r.code, r.stderr).toBe(0);
      return r.stdout.trim();
    };
    const alpha = await put(['Name=Alpha', 'Status=Open']); // #1: neither route
    await put(['--id', alpha, 'Status=Done']); // #2: Status=Done
    await put(['--id', alpha, 'Owner=ann']); // #3: still Done, and Owner changed
    const beta = await put(['Name=Beta', 'Owner=bob']); // #4: a new card with an Owner
    await put(['--id', beta, 'Name=Beta 2']); // #5: neither
    await waitFor(() => emu.state()[BOARD_ID]!.webhooks.delivered === 5, { what: 'the emulator to count 5 deliveries answered 200' });
    await done.waitForCompleted(2);
    await owners.waitForCompleted(2);
    const r = await listener.stop();
    expect(r.signal).toBe('SIGTERM');
    expect(emu.state()[BOARD_ID]!.webhooks).toMatchObject({ delivered: 5, pending: 0 });
    expect(readFileSync(record, 'utf8').split('\n').filter((l) => l.startsWith('{"seq":')).length).toBe(5);
    expect(bodies(done).map((b) => [b._id, b.Status, b.Owner])).toEqual([
      [alpha, 'Done', undefined],
      [alpha, 'Done', 'ann'],
    ]);
    expect(bodies(owners).map((b) => [b._id, b.Owner])).toEqual([
      [alpha, 'ann'],
      [beta, 'bob'],
    ]);
    expect(seqsOf(r.stdout)).toEqual([2, 3, 4]);
    // Several routes: each forward line names its URL.
    expect(r.stderr).toMatch(new RegExp(`↳ #2 forward to ${done.url}: 200 OK`));
    expect(r.stderr).toMatch(new RegExp(`↳ #4 forward to ${owners.url}: 200 OK`));
    expect(r.stderr).not.toMatch(/#[15] forward/);
    expect(r.stderr).toContain('stopped: 5 delivered, 0 refused, 0 waiting to be forwarded');
    // Each filtered route keeps its own ack log beside the record file.
    expect(readdirSync(dirname(record)).filter((f) => f.startsWith(`${basename(record)}.forwarded-`))).toHaveLength(2);
  });

  it('filters given before any --forward-to choose what is printed and narrow every route; on a terminal-less stdout too', async () => {
    const target = await app();
    const listener = await listen(['--where', 'Status!=Open', '--forward-to', target.url, '--where', 'Owner~AN']);
    await listener.waitFor(/Forwarding to /);
    expect(listener.stderr()).toContain("Only deliveries that match --where 'Status!=Open' are printed and forwarded.");
    const sent = [
      '{"_id":"c1","Status":"Open","Owner":"ann"}', // global says no
      '{"_id":"c2","Status":"Done","Owner":"bob"}', // printed? no route takes it: not printed
      '{"_id":"c3","Status":"Done","Owner":"Anna"}', // both
    ];
    for (const body of sent) expect(await post(listener.url, body, SIGNING_KEY)).toBe(200);
    await target.waitForCompleted(1);
    await listener.waitFor(/#3 forward/);
    const r = await listener.stop();
    expect(target.received.map((x) => x.body.toString())).toEqual([sent[2]]);
    expect(seqsOf(r.stdout)).toEqual([3]);
  });

  it('--changed without --forward-to filters what is printed: a new card counts as changing each field it has; a delete, a comment never', async () => {
    const listener = await listen(['--changed', 'Status', '--changed', 'Priority']);
    const sent = [
      '{"_id":"k1","Name":"a","Status":"Open"}', // new with Status: printed
      '{"_id":"k1","Name":"b","Status":"Open"}', // Name only: not printed
      '{"_id":"k1","Name":"b","Status":"Open","Priority":2}', // Priority added: printed
      '{"_id":"k1","deleted":true}', // a delete: not printed
      '{"_id":"k2","Name":"x"}', // new without either: not printed
      '{"_id":"k1","Status":"Done"}', // k1 was forgotten with its delete: new again, printed
    ];
    for (const body of sent) expect(await post(listener.url, body, SIGNING_KEY)).toBe(200);
    const r = await listener.stop();
    expect(seqsOf(r.stdout)).toEqual([1, 3, 6]);
    expect(r.stderr).toContain('stopped: 6 delivered');
  });
});

describe('without --record', () => {
  it("the spool and every route's ack log go at the stop once each route is done", async () => {
    const a = await app();
    const b = await app();
    const listener = await listen(['--forward-to', a.url, '--where', 'Status=Done', '--forward-to', b.url]);
    const spool = /Spooling deliveries for forwarding in (\S+) /.exec(await listener.waitFor(/Spooling .*\n/).then(() => listener.stderr()))![1]!;
    expect(await post(listener.url, '{"_id":"s1","Status":"Done"}', SIGNING_KEY)).toBe(200);
    expect(await post(listener.url, '{"_id":"s2","Status":"Open"}', SIGNING_KEY)).toBe(200);
    await a.waitForCompleted(1);
    await b.waitForCompleted(2);
    expect(readdirSync(dirname(spool)).filter((f) => f.startsWith(basename(spool)))).toHaveLength(3);
    const r = await listener.stop();
    expect(r.stderr).toContain('0 waiting to be forwarded');
    expect(readdirSync(dirname(spool)).filter((f) => f.startsWith(basename(spool)))).toEqual([]);
  });
});

describe('what waits', () => {
  it('a route that is down counts as waiting only the deliveries it takes', async () => {
    const down = await app();
    await down.down();
    const record = join(tempDir(), 'hooks.jsonl');
    const listener = await listen(['--record', record, '--forward-to', down.url, '--where', 'Status=Done']);
    for (const body of ['{"_id":"q1","Status":"Done"}', '{"_id":"q2","Status":"Open"}', '{"_id":"q3","Status":"Open"}', '{"_id":"q4","Status":"Done"}']) {
      expect(await post(listener.url, body, SIGNING_KEY)).toBe(200);
    }
    await listener.waitFor(/#1 forward to .*ECONNREFUSED/);
    const r = await listener.stop();
    expect(r.stderr).toContain('stopped: 4 delivered, 0 refused, 2 waiting to be forwarded');
    await down.up();
    const again = await listen(['--record', record, '--forward-to', down.url, '--where', 'Status=Done']);
    await again.waitFor(/Resuming: .*\n/);
    expect(again.stderr()).toContain('Resuming: 2 recorded deliveries were never forwarded; sending them first.');
    await down.waitForCompleted(2);
    expect((await again.stop()).stderr).toContain('0 waiting to be forwarded');
    expect(down.received.map((x) => (JSON.parse(x.body.toString()) as { _id: string })._id)).toEqual(['q1', 'q4']);
  });
});

describe('the order of the flags', () => {
  it('a filter belongs to the --forward-to before it; the same flags in another order route otherwise', async () => {
    const a = await app();
    const b = await app();
    const body = '{"_id":"o1","Status":"Done","Owner":"ann"}';
    // Status=Done after a's URL: a takes it, b (Owner=bob) does not.
    const first = await listen(['--forward-to', a.url, '--where', 'Status=Done', '--forward-to', b.url, '--where', 'Owner=bob']);
    expect(await post(first.url, body, SIGNING_KEY)).toBe(200);
    await a.waitForCompleted(1);
    await first.stop();
    // The filters swapped between the two URLs: now b gets it and a does not.
    const second = await listen(['--forward-to', a.url, '--where', 'Owner=bob', '--forward-to', b.url, '--where', 'Status=Done']);
    expect(await post(second.url, body, SIGNING_KEY)).toBe(200);
    await b.waitForCompleted(1);
    const r = await second.stop();
    expect(a.received).toHaveLength(1);
    expect(b.received).toHaveLength(1);
    expect(r.stderr).toContain(`Forwarding to ${a.url} what matches --where Owner=bob`);
  });
});

describe('bad filters: exit 2, before anything listens', () => {
  it('a --where without an operator, and a URL given twice', async () => {
    const bad = await spawnCli(['webhook', 'listen', '--port', '0', '--forward-to', 'http://127.0.0.1:9/x', '--where', 'Status'], { env: { CARDBOARD_SIGNING_KEY: SIGNING_KEY } }).stop('SIGCONT');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--where 'Status': it has no operator");
    expect(bad.stderr).not.toContain('Listening on');
    const twice = await spawnCli(['webhook', 'listen', '--port', '0', '--forward-to', 'http://127.0.0.1:9/x', '--changed', 'Status', '--forward-to', 'http://127.0.0.1:9/x'], { env: { CARDBOARD_SIGNING_KEY: SIGNING_KEY } }).stop('SIGCONT');
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain('--forward-to http://127.0.0.1:9/x is given twice');
  });

  it('a route to the listener itself is refused, whichever --forward-to it is', async () => {
    const free = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as AddressInfo;
        server.close(() => resolve(port));
      });
    });
    const args = ['webhook', 'listen', '--port', String(free), '--forward-to', `http://localhost:${free}/`, '--where', 'Status=Done', '--forward-to', 'http://127.0.0.1:9/x'];
    const r = await spawnCli(args, { env: { CARDBOARD_SIGNING_KEY: SIGNING_KEY } }).stop('SIGCONT');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`--forward-to http://localhost:${free}/ is this listener itself (port ${free})`);
  });

  it("with a board at hand, a field name not on the board is refused with the board's own (did you mean)", async () => {
    const emu = await startTestEmulator();
    cleanup.push(() => emu.close());
    const env = { ...boardEnv(emu), CARDBOARD_SIGNING_KEY: SIGNING_KEY };
    const where = await spawnCli(['webhook', 'listen', '--port', '0', '--where', 'status=Done'], { env }).stop('SIGCONT');
    expect(where.code).toBe(2);
    expect(where.stderr).toContain("--where 'status=Done': unknown field 'status' (did you mean 'Status'?)");
    const changed = await spawnCli(['webhook', 'listen', '--port', '0', '--forward-to', 'http://127.0.0.1:9/x', '--changed', 'owner'], { env }).stop('SIGCONT');
    expect(changed.code).toBe(2);
    expect(changed.stderr).toContain("--changed: unknown field 'owner' (did you mean 'Owner'?)");
  });

  it('without a board, a card whose field differs from a filter’s only by case is warned about once', async () => {
    const listener = await listen(['--where', 'status=Done']);
    for (let i = 1; i <= 3; i++) expect(await post(listener.url, `{"_id":"w${i}","Status":"Done"}`, SIGNING_KEY)).toBe(200);
    const r = await listener.stop();
    expect(r.stdout).toBe('');
    const warnings = r.stderr.split('\n').filter((l) => l.includes("names the field 'status'"));
    expect(warnings).toEqual(["warning: a filter names the field 'status' and card w1 has 'Status': field names are case-sensitive, so it never matches that field; write 'Status'"]);
  });
});

describe('resume after kill -9, route by route', () => {
  it('each route resumes from its own ack log, with the decisions made when the deliveries arrived', async () => {
    const done = await app();
    const owners = await app();
    await owners.down();
    const record = join(tempDir(), 'hooks.jsonl');
    const args = ['--record', record, '--forward-to', done.url, '--where', 'Status=Done', '--forward-to', owners.url, '--changed', 'Owner'];
    const first = await listen(args);
    const sent = [
      '{"_id":"r1","Owner":"ann","Status":"Open"}', // owners (new card with an Owner)
      '{"_id":"r1","Owner":"ann","Status":"Done"}', // done; Owner unchanged against #1: not owners
      '{"_id":"r1","Owner":"bob","Status":"Done"}', // both
      '{"_id":"r2","Status":"Open"}', // neither
    ];
    for (const body of sent) expect(await post(first.url, body, SIGNING_KEY)).toBe(200);
    // Killed once the done route's ack log holds #3 (an ack not yet written would send it again: at least once).
    const ackLogs = () => readdirSync(dirname(record)).filter((f) => f.startsWith(`${basename(record)}.forwarded-`));
    await waitFor(() => ackLogs().some((f) => readFileSync(join(dirname(record), f), 'utf8').split('\n').includes('3')), { what: "#3 in the done route's ack log" });
    await first.waitFor(/#1 forward to .*ECONNREFUSED/);
    const killed = await first.stop('SIGKILL');
    expect(killed.signal).toBe('SIGKILL');
    await owners.up();
    const second = await listen(args);
    // Four deliveries came after the owners route's last ack; it takes two of them.
    await second.waitFor(/Resuming: .*\n/);
    expect(second.stderr()).toContain('Resuming: 2 recorded deliveries were never forwarded; sending them first.');
    await owners.waitForCompleted(2);
    expect(await post(second.url, '{"_id":"r1","Owner":"cy","Status":"Open"}', SIGNING_KEY)).toBe(200);
    await owners.waitForCompleted(3);
    const r = await second.stop();
    expect(r.stderr).toContain('0 waiting to be forwarded');
    // #2 changed no Owner when it arrived: a restart that judged it alone (a new card) would send it.
    expect(owners.received.map((x) => x.body.toString())).toEqual([sent[0], sent[2], '{"_id":"r1","Owner":"cy","Status":"Open"}']);
    // The route that was up got everything it takes once, and nothing again.
    expect(done.received.map((x) => x.body.toString())).toEqual([sent[1], sent[2]]);
  });
});

/** The inspector's entries up to its `ready` event (the history), read from its event stream. */
async function inspectorEntries(page: string): Promise<Array<Record<string, unknown>>> {
  return (await inspectorHistory(page)).filter((e) => e.event === 'entry').map((e) => e.data);
}

describe('the inspector', () => {
  it("keeps every delivery, each with the URLs of the routes that take it ([] for none), live and from the record file's history", async () => {
    const a = await app();
    const b = await app();
    const record = join(tempDir(), 'hooks.jsonl');
    const args = ['--record', record, '--forward-to', a.url, '--where', 'Status=Done', '--forward-to', b.url, '--changed', 'Owner'];
    const first = await listen(args);
    expect(await post(first.url, '{"_id":"i1","Status":"Done","Owner":"ann"}', SIGNING_KEY)).toBe(200);
    await b.waitForCompleted(1);
    await first.stop();
    const second = await listen([...args, '--inspect', '0']);
    await second.waitFor(/Inspector: (\S+)/);
    const page = /Inspector: (\S+)/.exec(second.stderr())![1]!;
    expect(await post(second.url, '{"_id":"i1","Status":"Open","Owner":"ann"}', SIGNING_KEY)).toBe(200);
    await waitFor(async () => (await inspectorEntries(page)).length === 2, { what: 'two entries in the inspector' });
    const entries = await inspectorEntries(page);
    expect(entries.map((e) => [e.seq, e.recorded, e.routes])).toEqual([
      [1, true, [a.url, b.url]],
      [2, false, []],
    ]);
    const r = await second.stop();
    // Not printed, but answered and recorded.
    expect(seqsOf(r.stdout)).toEqual([]);
    expect(r.stderr).toContain('stopped: 1 delivered');
  });
});
