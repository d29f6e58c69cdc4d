// A replay from the inspector's page or API, with the built binary: it reaches the app with the edited
// bytes and the key, and the listener reports it beside its deliveries, as a line on a terminal and as a
// JSON line with --json.
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { startOnPty } from '../helpers/pty.js';
import { inspectingListener, post } from './helpers.js';
import { type Cleanup, receiver } from './inspector-helpers.js';

const KEY = 'sk-inspect-replay-0123';
let cleanup: Cleanup = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

async function replay(page: string, seq: number, body: unknown): Promise<Record<string, unknown>> {
  const token = new URL(page).pathname.split('/')[1]!;
  const res = await request(`${page}api/deliveries/${seq}/replay`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-cardboard-token': token }, body: JSON.stringify(body) });
  expect(res.statusCode).toBe(200);
  return (await res.body.json()) as Record<string, unknown>;
}

describe('webhook listen --inspect: replays reported', () => {
  it('--json: an edited replay reaches the app with the edited bytes and the key, and is a {"replay": …} line on stdout', async () => {
    const app = await receiver(cleanup);
    const l = await inspectingListener(['--inspect', '0', '--json'], KEY, cleanup);
    const page = l.page;
    expect(await post(l.url, '{"_id":"c1","Status":"Open"}', KEY)).toBe(200);
    await l.waitFor(/"seq":1/, 'stdout');
    const edited = '{"_id":"c1","Status":"Done","Note":"<script>alert(1)</script>"}';
    const answer = await replay(page, 1, { url: app.url, headers: { 'content-type': 'application/json', 'x-signingKey': '***' }, body: edited });
    expect(answer).toMatchObject({ url: app.url, edited: true, status: 202, body: 'thanks 1', headers: { 'x-app': 'local' } });
    expect(app.got[0]!.body.toString()).toBe(edited);
    expect(app.got[0]!.headers['x-signingkey']).toBe(KEY);
    await replay(page, 1, { url: app.url });
    await l.waitFor(/"replay".*\n.*"replay"/, 'stdout');
    const lines = l.stdout().trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toHaveLength(3);
    expect(lines[1]).toEqual({ replay: { seq: 1, url: app.url, edited: true, status: 202, ms: expect.any(Number), body: 'thanks 1' } });
    expect(lines[2]).toMatchObject({ replay: { seq: 1, edited: false, status: 202, body: 'thanks 2' } });
    const r = await l.stop('SIGTERM');
    expect(r.stdout + r.stderr).not.toContain(KEY);
  });

  it('on a terminal: a line beside the deliveries, the app\'s answer escaped', async () => {
    const app = await receiver(cleanup, () => 'ok \u001b[31mred\u0007');
    const term = startOnPty(['webhook', 'listen', '--port', '0', '--inspect', '0'], { CARDBOARD_SIGNING_KEY: KEY, NO_COLOR: '1' }, { cols: 200 });
    const url = (await term.waitFor(/Listening on (\S+)/))[1]!;
    const page = (await term.waitFor(/Inspector: (\S+)/))[1]!;
    expect(await post(url, '{"_id":"c1","Status":"Open"}', KEY)).toBe(200);
    await term.waitFor(/#1 {2}POST/);
    await replay(page, 1, { url: app.url, body: '{"_id":"c1","Status":"Done"}' });
    await term.waitFor(/↻ #1 replayed \(edited\) → \S+: 202 Accepted in [\d.]+ ms {2}ok \\e\[31mred\\a/);
    await replay(page, 1, { url: 'http://127.0.0.1:1/down' });
    await term.waitFor(/↻ #1 replayed → http:\/\/127\.0\.0\.1:1\/down: no answer \(ECONNREFUSED\)/);
    term.type('\u0003');
    expect(await term.ended).toEqual({ code: null, signal: 'SIGINT' });
    expect(term.raw()).not.toMatch(/\u001b\[31m/);
  });
});
