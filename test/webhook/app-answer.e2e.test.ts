// The app's answer to each forward try: its status, headers and the start of its body, shown under the
// try's line with --verbose (escaped), exact in --json, kept in the record file's forward entries (which
// replay skips), and in the inspector's detail, after a restart with the same --record too. The signing
// key an app echoes is nowhere.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { runMain, tempDir } from '../helpers/cli.js';
import { BOARD_ID, type RunningEmulator, SIGNING_KEY, TOKEN } from '../helpers/emulator.js';
import { startOnPty } from '../helpers/pty.js';
import { waitFor } from '../helpers/wait.js';
import { emulatorPointingAt, keyedListener, post, type RunningListener, TestApp } from './helpers.js';

let cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

/** A header value with control characters an HTTP parser lets through (C1 CSI, a tab), and a body with ESC sequences. */
const HOSTILE_HEADER = 'trace\u009b31mred\tend';
const HOSTILE_BODY = 'boom \u001b]0;pwned\u0007 \u001b[31mred\u001b[0m\nsecond line';

/** An app that answers the first try 500 with a hostile header and body, then 200 with JSON. */
async function failingThenOk(): Promise<TestApp> {
  const app = new TestApp();
  app.answer = (n) =>
    n === 1
      ? { status: 500, headers: { 'content-type': 'text/plain', 'x-app-trace': HOSTILE_HEADER }, body: HOSTILE_BODY }
      : { status: 200, headers: { 'content-type': 'application/json', 'x-app-trace': 'fine' }, body: '{"ok":true,"n":2}' };
  await app.up();
  cleanup.push(() => app.down());
  return app;
}

const listen = (args: string[], key = SIGNING_KEY): Promise<RunningListener> => keyedListener(args, key, cleanup);


const putCard = (emu: RunningEmulator) => runMain(['card', 'put', 'Name=Alpha', 'Status=Open'], { env: { CARDBOARD_BASE_URL: emu.url, CARDBOARD_BOARD: BOARD_ID, CARDBOARD_TOKEN: TOKEN } });

async function getJson(url: string): Promise<{ status: number; text: string; json: Record<string, unknown> }> {
  const res = await request(url);
  const text = await res.body.text();
  return { status: res.statusCode, text, json: JSON.parse(text) as Record<string, unknown> };
}

/** The lines of a text that start as a forward entry does. */
const forwardLines = (text: string) => text.split(/\r?\n/).filter((l) => l.startsWith('{"forward":'));

describe("the app's answer to each forward try", () => {
  it('is exact in --json, the same in the record file (which replay reads as deliveries only), and in the inspector, after a restart too', async () => {
    const app = await failingThenOk();
    const record = join(tempDir(), 'hooks.jsonl');
    const listener = await listen(['--record', record, '--forward-to', app.url, '--json', '--inspect', '0']);
    await listener.waitFor(/Inspector: (\S+)/);
    const page = /Inspector: (\S+)/.exec(listener.stderr())![1]!;
    const emu = await emulatorPointingAt(listener.url, cleanup);
    const put = await putCard(emu);
    expect(put.code, put.stderr).toBe(0);
    await app.waitForCompleted(2);
    await waitFor(() => forwardLines(listener.stdout()).length === 2, { what: () => `two forward lines on stdout; it has:\n${listener.stdout()}` });

    // --json: one line per try, the answer exact (the body's ESC sequences and the header's C1 as they came).
    const printed = forwardLines(listener.stdout());
    const [first, second] = printed.map((l) => (JSON.parse(l) as { forward: Record<string, unknown> }).forward);
    expect(first).toEqual({ seq: 1, url: app.url, attempt: 1, ok: false, at: expect.stringMatching(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/), status: 500, ms: expect.any(Number), headers: expect.objectContaining({ 'content-type': 'text/plain', 'x-app-trace': HOSTILE_HEADER }), body: HOSTILE_BODY });
    expect(second).toMatchObject({ seq: 1, url: app.url, attempt: 2, ok: true, status: 200, headers: { 'content-type': 'application/json', 'x-app-trace': 'fine' }, body: { ok: true, n: 2 } });
    expect(Object.keys(first!)).toEqual(['seq', 'url', 'attempt', 'ok', 'at', 'status', 'ms', 'headers', 'body']);
    // The deliveries' lines are as they were: the first is the delivery.
    expect(listener.stdout().split('\n')[0]).toMatch(/^\{"seq":1,/);

    // The inspector: the list stays small (no answer in it), the detail has the last try with the answer.
    const detail = await getJson(`${page}deliveries/1`);
    expect(detail.status).toBe(200);
    expect(detail.json.forward).toMatchObject({ url: app.url, attempt: 2, ok: true, status: 200, headers: { 'x-app-trace': 'fine' }, body: { ok: true, n: 2 } });
    const stopped = await listener.stop();
    expect(stopped.stderr).not.toContain('cannot write');

    // The record file holds the same entries, after the delivery's line.
    const text = readFileSync(record, 'utf8');
    expect(forwardLines(text)).toEqual(printed);
    expect(text.split('\n')[0]).toMatch(/^\{"seq":1,/);

    // webhook replay reads only the deliveries, and warns of no unreadable line.
    const other = new TestApp();
    await other.up();
    cleanup.push(() => other.down());
    const replay = await runMain(['webhook', 'replay', record, '--to', other.url], { env: { CARDBOARD_SIGNING_KEY: SIGNING_KEY } });
    expect(replay.code, replay.stderr).toBe(0);
    expect(other.received).toHaveLength(1);
    expect(replay.stderr).not.toMatch(/not a delivery|skipped/);

    // Restarted with the same --record: the inspector shows the app's last answer to the old delivery.
    const again = await listen(['--record', record, '--inspect', '0']);
    await again.waitFor(/Inspector: (\S+)/);
    const page2 = /Inspector: (\S+)/.exec(again.stderr())![1]!;
    const restored = await getJson(`${page2}deliveries/1`);
    expect(restored.json.forward).toEqual({ url: app.url, attempt: 2, ok: true, status: 200, ms: expect.any(Number), headers: (second as { headers: unknown }).headers, body: { ok: true, n: 2 } });
    // The list's entry (the event stream's history) carries the try without the answer.
    const res = await request(`${page2}events`);
    let events = '';
    for await (const chunk of res.body) {
      events += (chunk as Buffer).toString('utf8');
      if (events.includes('event: ready')) break;
    }
    res.body.destroy();
    const entry = JSON.parse(/^event: entry\ndata: (.*)$/m.exec(events)![1]!) as { forward: Record<string, unknown> };
    expect(entry.forward).toEqual({ url: app.url, attempt: 2, ok: true, status: 200, ms: expect.any(Number) });
  });

  it('on a terminal with --verbose follows each try, escaped', async () => {
    const app = await failingThenOk();
    const term = startOnPty(['webhook', 'listen', '--port', '0', '--forward-to', app.url, '--verbose'], { CARDBOARD_SIGNING_KEY: SIGNING_KEY, NO_COLOR: '1' }, { cols: 200 });
    const url = (await term.waitFor(/Listening on (\S+)/))[1]!;
    expect(await post(url, '{"_id":"c1","Name":"A"}', SIGNING_KEY)).toBe(200);
    await term.waitFor(/\n {6}\{"ok":true,"n":2\}/);
    term.type('\u0003');
    expect(await term.ended).toEqual({ code: null, signal: 'SIGINT' });
    const screen = term.raw();
    // Nothing the app wrote reaches the terminal raw.
    expect(screen).not.toContain('\u001b]0;pwned');
    expect(screen).not.toContain('\u001b[31mred');
    expect(screen).not.toContain('\u009b');
    const lines = screen.split(/\r?\n/);
    const at = lines.findIndex((l) => l.includes('#1 forward: 500'));
    expect(lines.slice(at + 1, at + 4)).toEqual(['      500 Internal Server Error', '      content-type: text/plain', '      x-app-trace: trace\\x9b31mred\\tend']);
    expect(screen).toContain('      boom \\e]0;pwned\\a \\e[31mred\\e[0m\r\n      second line');
    expect(screen).toMatch(/#1 forward \(try 2\): 200 OK.*\r?\n {6}200 OK\r?\n {6}content-type: application\/json/);
  });

  it('with --json and --verbose follows each try line on stderr, escaped, beside the exact JSON line on stdout', async () => {
    const app = await failingThenOk();
    const listener = await listen(['--forward-to', app.url, '--json', '--verbose']);
    expect(await post(listener.url, '{"_id":"c1","Name":"A"}', SIGNING_KEY)).toBe(200);
    await listener.waitFor(/#1 forward \(try 2\): 200 OK[^\n]*\n {6}200 OK\n/);
    const r = await listener.stop();
    const lines = r.stderr.split('\n');
    const at = lines.findIndex((l) => l.includes('#1 forward: 500'));
    expect(lines.slice(at + 1, at + 4)).toEqual(['      500 Internal Server Error', '      content-type: text/plain', '      x-app-trace: trace\\x9b31mred\\tend']);
    expect(r.stderr).not.toContain('\u001b]0;pwned');
    expect(forwardLines(r.stdout).map((l) => (JSON.parse(l) as { forward: { status: number } }).forward.status)).toEqual([500, 200]);
  });

  it('on a terminal without --verbose is the start of the body on the try line, without a key the app spelled with JSON escapes', async () => {
    const key = 'whsk-spelled-by-the-app-4567';
    const app = new TestApp();
    app.answer = (n) =>
      n === 1
        ? { status: 403, headers: { 'content-type': 'application/json', 'x-app-trace': 'no' }, body: `{"error":"wrong key ${key.replaceAll('-', '\\u002d')}"}` }
        : { status: 200, headers: { 'content-type': 'application/json', 'x-app-trace': 'ok' }, body: '{"ok":true}' };
    await app.up();
    cleanup.push(() => app.down());
    const term = startOnPty(['webhook', 'listen', '--port', '0', '--forward-to', app.url], { CARDBOARD_SIGNING_KEY: key, NO_COLOR: '1' }, { cols: 200 });
    const url = (await term.waitFor(/Listening on (\S+)/))[1]!;
    expect(await post(url, '{"_id":"c1","Name":"A"}', key)).toBe(200);
    await term.waitFor(/back up after/);
    term.type('\u0003');
    await term.ended;
    const screen = term.raw();
    expect(screen).toContain('#1 forward: 403 Forbidden in');
    expect(screen).toContain('{"error":"wrong key ***"}');
    expect(screen).not.toContain('spelled-by-the-app');
    // No line of the answer follows the try's.
    expect(screen).not.toContain('x-app-trace');
    expect(screen).not.toMatch(/\n {6}\S/);
  });

  it('an app that echoes the signing key, in its headers and its body, plainly or with JSON escapes: the key is nowhere', async () => {
    const key = 'whsk-echoed-by-the-app-0123';
    const app = new TestApp();
    app.answer = (_n, req) => {
      const got = String(req.headers['x-signingkey']);
      return {
        status: 401,
        headers: { 'content-type': 'application/json', 'x-echo': `key=${got}` },
        // `spelled`: the key with its dashes as JSON escapes, so its bytes hold no copy of it.
        body: `{"error":"wrong key ${got}","spelled":"${got.replaceAll('-', '\\u002d')}"}`,
      };
    };
    await app.up();
    cleanup.push(() => app.down());
    const record = join(tempDir(), 'hooks.jsonl');
    const term = startOnPty(['webhook', 'listen', '--port', '0', '--record', record, '--forward-to', app.url, '--verbose', '--inspect', '0'], { CARDBOARD_SIGNING_KEY: key, NO_COLOR: '1' }, { cols: 200 });
    const url = (await term.waitFor(/Listening on (\S+)/))[1]!;
    const page = (await term.waitFor(/Inspector: (\S+)/))[1]!;
    expect(await post(url, '{"_id":"c1","Name":"A"}', key)).toBe(200);
    await waitFor(() => app.completed >= 2, { what: 'two tries' });
    await term.waitFor(/x-echo: key=\*\*\*/);
    const detail = await getJson(`${page}deliveries/1`);
    term.type('\u0003');
    await term.ended;
    // The app did get the key, and echoed it: its answer is shown, the key in it replaced by ***.
    expect(app.received[0]!.headers['x-signingkey']).toBe(key);
    expect(detail.json.forward).toMatchObject({ status: 401, headers: { 'x-echo': 'key=***' }, body: { error: 'wrong key ***', spelled: '***' } });
    const recorded = readFileSync(record, 'utf8');
    expect(forwardLines(recorded).length).toBeGreaterThanOrEqual(2);
    expect(JSON.parse(forwardLines(recorded)[0]!)).toMatchObject({ forward: { status: 401, headers: { 'x-echo': 'key=***' }, body: { error: 'wrong key ***', spelled: '***' } } });
    for (const [where, text] of [
      ['the terminal', term.raw()],
      ['the record file', recorded],
      ['the inspector', detail.text],
    ] as const) {
      expect(text, where).not.toContain(key);
      expect(text, where).not.toContain('echoed-by-the-app');
    }
  });
});
