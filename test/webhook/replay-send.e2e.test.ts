import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runMain, tempDir } from '../helpers/cli.js';
import { BOARD_ID, startTestEmulator, TOKEN } from '../helpers/emulator.js';
import { post, type RunningListener, startListener, TestApp } from './helpers.js';

const K1 = 'sk-recorder-1';
const K2 = 'sk-receiver-2';
let cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

async function listen(key: string | undefined, args: string[]): Promise<RunningListener> {
  const l = await startListener(args, { env: { CARDBOARD_SIGNING_KEY: key } });
  cleanup.push(async () => {
    if (l.child.exitCode === null) await l.stop('SIGKILL');
  });
  return l;
}

function recorded(path: string): Array<{ seq: number; body: unknown; bodyBase64: string; headers: Record<string, string> }> {
  return readFileSync(path, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

/** A record file with four deliveries: three cards (two Done) and one text body. */
async function recording(): Promise<string> {
  const path = join(tempDir(), 'rec.jsonl');
  const l = await listen(K1, ['--record', path]);
  for (const body of ['{"_id":"a","Status":"Open"}', '{"_id":"b","Status":"Done"}', 'just text', '{"_id":"c","Status":"Done","N":1}']) {
    expect(await post(l.url, body, K1, { 'x-custom': 'kept' })).toBe(200);
  }
  expect((await l.stop()).signal).toBe('SIGTERM');
  return path;
}

describe('webhook replay', () => {
  it('re-sends every delivery in order with its exact bytes and headers, signed with the key in use', async () => {
    const source = await recording();
    const sink = join(tempDir(), 'sink.jsonl');
    const receiver = await listen(K2, ['--record', sink]);
    const r = await runMain(['webhook', 'replay', source, '--to', receiver.url], { env: { CARDBOARD_SIGNING_KEY: K2 }, spawn: true });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim().split('\n').map((l) => l.split(/\s+/).slice(0, 3).join(' '))).toEqual(['#1 200 OK', '#2 200 OK', '#3 200 OK', '#4 200 OK']);
    expect(r.stderr).toContain('replayed 4: 4 answered 200, 0 failed');
    await receiver.stop();
    const [from, to] = [recorded(source), recorded(sink)];
    expect(to.map((l) => l.bodyBase64)).toEqual(from.map((l) => l.bodyBase64));
    expect(to.every((l) => l.headers['x-custom'] === 'kept' && l.headers['content-type'] === 'application/json')).toBe(true);
    expect(r.stdout + r.stderr).not.toContain(K2);
  });

  it('--from and --filter pick deliveries; a refused key exits 4, any other failure exits 1', async () => {
    const source = await recording();
    const receiver = await listen(K2, []);
    const picked = await runMain(['webhook', 'replay', source, '--to', receiver.url, '--from', '2', '--filter', 'Status=Done', '--json'], { env: { CARDBOARD_SIGNING_KEY: K2 } });
    expect(picked.code, picked.stderr).toBe(0);
    expect(picked.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { seq: number; status: number }).seq)).toEqual([2, 4]);
    const refused = await runMain(['webhook', 'replay', source, '--to', receiver.url], { env: { CARDBOARD_SIGNING_KEY: K1 } });
    expect(refused.code).toBe(4);
    expect(refused.stdout).toContain('#1  403 Forbidden');
    expect(refused.stderr).toContain('4 of 4 deliveries were not answered 200');
    const app = new TestApp();
    app.status = 500;
    await app.up();
    cleanup.push(() => app.down());
    const failing = await runMain(['webhook', 'replay', source, '--to', app.url, '--filter', 'N=1'], { env: { CARDBOARD_SIGNING_KEY: K2 } });
    expect(failing.code).toBe(1);
    expect(failing.stdout).toMatch(/^#4 {2}500 Internal Server Error in [\d.]+ ms {2}\{"got":1\}$/m);
    expect(failing.stderr).toContain('--from 4');
    const noKey = await runMain(['webhook', 'replay', source, '--to', app.url]);
    expect(noKey.code).toBe(4);
    expect(app.received.length).toBe(1);
  });
});

describe('webhook send', () => {
  it('sends one signed card and prints the status and body; --wrong-key expects the 403 (exit 0)', async () => {
    const sink = join(tempDir(), 'sink.jsonl');
    const receiver = await listen(K2, ['--record', sink]);
    const ok = await runMain(['webhook', 'send', '--to', receiver.url, '--data', '{"Name":"Sent"}'], { env: { CARDBOARD_SIGNING_KEY: K2 }, spawn: true });
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/^200 OK in [\d.]+ ms\nOK\n$/);
    const wrong = await runMain(['webhook', 'send', '--to', receiver.url, '--wrong-key'], { env: { CARDBOARD_SIGNING_KEY: K2 } });
    expect(wrong.code, wrong.stderr).toBe(0);
    expect(wrong.stdout).toMatch(/^403 Forbidden in [\d.]+ ms\nwrong x-signingKey\n$/);
    const json = await runMain(['webhook', 'send', '--to', receiver.url, '--wrong-key', '--json'], { env: { CARDBOARD_SIGNING_KEY: K2 } });
    expect(json.code, json.stderr).toBe(0);
    expect(json.stdout.endsWith('\n') && json.stdout.trimEnd().split('\n')).toHaveLength(1);
    expect(JSON.parse(json.stdout)).toEqual({ status: 403, ms: expect.any(Number), body: expect.stringMatching(/^wrong x-signingKey\n?$/) });
    const none = await runMain(['webhook', 'send', '--to', receiver.url]);
    expect(none.code).toBe(4);
    await receiver.stop();
    const lines = recorded(sink);
    expect(lines.length).toBe(1);
    expect(lines[0]!.body).toEqual({ _id: expect.stringMatching(/^[23456789ABCDEFGHJKLMNPQRSTWXYZabcdefghijkmnopqrstuvwxyz]{17}$/), Name: 'Sent' });
  });

  it('exits 1 when a receiver accepts a wrong key, and sends a real card with --card', async () => {
    const open = await listen(undefined, ['--no-verify', '--json']);
    const accepted = await runMain(['webhook', 'send', '--to', open.url, '--wrong-key']);
    expect(accepted.code).toBe(1);
    expect(accepted.stderr).toContain('answered 200 to a wrong signing key');
    const emu = await startTestEmulator();
    cleanup.push(() => emu.close());
    const created = await fetch(`${emu.url}/api/aptlet/${BOARD_ID}`, { method: 'POST', headers: { 'x-token': TOKEN, 'content-type': 'application/json' }, body: '{"Name":"Real","Owner":"ana"}' });
    const card = (await created.json()) as { _id: string };
    const sent = await runMain(['webhook', 'send', '--to', open.url, '--card', card._id], {
      env: { CARDBOARD_BASE_URL: emu.url, CARDBOARD_BOARD: BOARD_ID, CARDBOARD_TOKEN: TOKEN, CARDBOARD_SIGNING_KEY: 'sk-x' },
    });
    expect(sent.code, sent.stderr).toBe(0);
    const r = await open.stop();
    const bodies = r.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { body: unknown }).body);
    expect(bodies[1]).toEqual(emu.state()[BOARD_ID]!.cards.find((c) => c._id === card._id));
  });
});
