import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Pool } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { runMain, tempDir } from '../helpers/cli.js';
import { BOARD_ID, type RunningEmulator, SIGNING_KEY, TOKEN } from '../helpers/emulator.js';
import { waitFor } from '../helpers/wait.js';
import { emulatorPointingAt, keyedListener, post, type RunningListener, type TestApp, upApp } from './helpers.js';

let cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

const app = (): Promise<TestApp> => upApp(cleanup);

const listen = (args: string[]): Promise<RunningListener> => keyedListener(args, SIGNING_KEY, cleanup);


/** The deliveries a record file holds: a forward try's entry (`{"forward":…}`) is not one. */
function recorded(path: string): Array<{ seq: number; body: unknown; bodyBase64: string }> {
  return readFileSync(path, 'utf8').split('\n').filter((l) => l.startsWith('{"seq":')).map((l) => JSON.parse(l));
}

const cli = (emu: RunningEmulator, args: string[]) => runMain(args, { env: { CARDBOARD_BASE_URL: emu.url, CARDBOARD_BOARD: BOARD_ID, CARDBOARD_TOKEN: TOKEN } });

describe('emulator → listener → app', () => {
  it('card put reaches the app through the listener with the exact bytes and x-signingKey', async () => {
    const target = await app();
    const record = join(tempDir(), 'hooks.jsonl');
    const listener = await listen(['--record', record, '--forward-to', target.url, '--json']);
    const emu = await emulatorPointingAt(listener.url, cleanup);
    const created = await cli(emu, ['card', 'put', 'Name=Alpha', 'Status=Open', '--json']);
    expect(created.code, created.stderr).toBe(0);
    const id = (JSON.parse(created.stdout) as { _id: string })._id;
    const updated = await cli(emu, ['card', 'put', '--id', id, 'Status=Done']);
    expect(updated.code, updated.stderr).toBe(0);
    await target.waitForCompleted(2);
    const lines = recorded(record);
    expect(lines.map((l) => l.body)).toEqual([
      { _id: id, Name: 'Alpha', Status: 'Open' },
      expect.objectContaining({ _id: id, Name: 'Alpha', Status: 'Done' }),
    ]);
    for (const [i, got] of target.received.entries()) {
      expect(got.body.equals(Buffer.from(lines[i]!.bodyBase64, 'base64'))).toBe(true);
      expect(got.headers['x-signingkey']).toBe(SIGNING_KEY);
      expect(got.headers['content-type']).toBe('application/json');
      expect(got.method).toBe('POST');
    }
    expect(emu.state()[BOARD_ID]!.webhooks).toMatchObject({ delivered: 2, pending: 0 });
    await waitFor(() => (listener.stderr().match(/forward: 200 OK/g) ?? []).length === 2, { what: 'two "forward: 200 OK" lines' });
    const r = await listener.stop();
    expect(r.signal).toBe('SIGTERM');
    expect(r.stderr).toMatch(/↳ #1 forward: 200 OK in [\d.]+ ms {2}\{"got":1\}/);
    expect(r.stderr).toContain('stopped: 2 delivered, 0 refused, 0 waiting to be forwarded');
  });

  it('loses nothing while the app is down: the service gets its 200s, the app gets everything in order once back', async () => {
    const target = await app();
    await target.down();
    const record = join(tempDir(), 'hooks.jsonl');
    const listener = await listen(['--record', record, '--forward-to', target.url, '--json']);
    const emu = await emulatorPointingAt(listener.url, cleanup);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await cli(emu, ['card', 'put', `Name=Card ${i}`])).stdout.trim());
    await waitFor(() => emu.state()[BOARD_ID]!.webhooks.delivered === 5, { what: 'the emulator to count 5 deliveries done' });
    await listener.waitFor(/#1 forward: no answer \(ECONNREFUSED\)/);
    await target.up();
    await target.waitForCompleted(5);
    expect(target.received.map((r) => (JSON.parse(r.body.toString()) as { _id: string })._id)).toEqual(ids);
    expect(recorded(record).map((l) => l.seq)).toEqual([1, 2, 3, 4, 5]);
    expect((await listener.stop()).signal).toBe('SIGTERM');
  });

  it('a restarted listener with the same --record resumes forwarding what was never forwarded', async () => {
    const target = await app();
    await target.down();
    const record = join(tempDir(), 'hooks.jsonl');
    const first = await listen(['--record', record, '--forward-to', target.url]);
    for (let i = 1; i <= 3; i++) expect(await post(first.url, `{"_id":"r${i}"}`, SIGNING_KEY)).toBe(200);
    await first.waitFor(/retry in/);
    const stopped = await first.stop();
    expect(stopped.signal).toBe('SIGTERM');
    expect(stopped.stderr).toContain('3 waiting to be forwarded');
    await target.up();
    const second = await listen(['--record', record, '--forward-to', target.url]);
    await second.waitFor(/Resuming: 3 recorded deliveries were never forwarded/);
    await target.waitForCompleted(3);
    expect(await post(second.url, '{"_id":"r4"}', SIGNING_KEY)).toBe(200);
    await target.waitForCompleted(4);
    expect(target.received.map((r) => r.body.toString())).toEqual(['{"_id":"r1"}', '{"_id":"r2"}', '{"_id":"r3"}', '{"_id":"r4"}']);
    const r = await second.stop();
    expect(r.signal).toBe('SIGTERM');
    expect(r.stderr).toContain('0 waiting to be forwarded');
    expect(Math.max(...readFileSync(`${record}.forwarded`, 'utf8').split('\n').filter(Boolean).map(Number))).toBe(4);
  });
});

describe('while the app is down: not one retry line every 5 s for ever', () => {
  it('piped: the first failure and the recovery are lines, the tries between are not; the start line shows --forward-timeout as written', async () => {
    const target = await app();
    target.status = 503;
    const listener = await listen(['--forward-to', target.url, '--forward-timeout', '90s', '--json']);
    await listener.waitFor(/Forwarding to .*\n/);
    expect(listener.stderr()).toContain(`Forwarding to ${target.url} (timeout 90s).`);
    expect(await post(listener.url, '{"_id":"d1"}', SIGNING_KEY)).toBe(200);
    // Causal: four tries reached the app (100 ms backoff doubling), then it recovers.
    await target.waitForCompleted(4);
    target.status = 200;
    await listener.waitFor(/back up after/);
    const r = await listener.stop();
    expect(r.signal).toBe('SIGTERM');
    const forwardLines = r.stderr.split('\n').filter((l) => l.includes('#1 forward'));
    expect(forwardLines).toHaveLength(2);
    expect(forwardLines[0]).toMatch(/^ {2}↳ #1 forward: 503 Service Unavailable in [\d.]+ ms {2}\{"got":1\}/);
    expect(forwardLines[1]).toMatch(/^ {2}↳ #1 forward \(try \d+\): 200 OK in [\d.]+ ms {2}\{"got":\d+\} {2}\(back up after \d+s down, \d+ tries\)$/);
    expect(Number(/back up after \d+s down, (\d+) tries/.exec(forwardLines[1]!)![1])).toBeGreaterThanOrEqual(5);
    expect(r.stderr).not.toMatch(/\r|\u001b\[2K/);
  });
});

describe('under load', () => {
  it('answers 2,000 deliveries from 32 concurrent senders with 200 and records every one', async () => {
    const record = join(tempDir(), 'load.jsonl');
    const listener = await listen(['--record', record, '--json']);
    const pool = new Pool(new URL(listener.url).origin, { connections: 32 });
    cleanup.push(() => pool.close());
    const statuses: number[] = [];
    let next = 0;
    const sender = async () => {
      for (let i = next++; i < 2000; i = next++) {
        const res = await pool.request({ path: '/', method: 'POST', headers: { 'x-signingKey': SIGNING_KEY, 'content-type': 'application/json' }, body: `{"_id":"load-${i}"}` });
        await res.body.dump();
        statuses.push(res.statusCode);
      }
    };
    await Promise.all(Array.from({ length: 32 }, sender));
    expect(statuses.length).toBe(2000);
    expect(statuses.every((s) => s === 200)).toBe(true);
    const r = await listener.stop();
    expect(r.signal).toBe('SIGTERM');
    const lines = recorded(record);
    expect(lines.map((l) => l.seq)).toEqual(Array.from({ length: 2000 }, (_, i) => i + 1));
    expect(new Set(lines.map((l) => (l.body as { _id: string })._id)).size).toBe(2000);
    expect(r.stdout.trim().split('\n').length).toBe(2000);
  });

  it('keeps acknowledging at once while the app takes 3 s per forward; SIGTERM then flushes and exits 0', async () => {
    const target = await app();
    target.delayMs = 3000;
    const record = join(tempDir(), 'slow.jsonl');
    const listener = await listen(['--record', record, '--forward-to', target.url, '--json']);
    const pool = new Pool(new URL(listener.url).origin, { connections: 32 });
    cleanup.push(() => pool.close());
    const completedAtAck: number[] = [];
    await Promise.all(
      Array.from({ length: 64 }, async (_, i) => {
        const res = await pool.request({ path: '/', method: 'POST', headers: { 'x-signingKey': SIGNING_KEY }, body: `{"_id":"slow-${i}"}` });
        await res.body.dump();
        expect(res.statusCode).toBe(200);
        completedAtAck.push(target.completed);
      }),
    );
    // Every 200 came back before the app had finished even the first forward.
    expect(completedAtAck).toEqual(Array(64).fill(0));
    const r = await listener.stop('SIGTERM');
    expect(r.signal).toBe('SIGTERM');
    expect(recorded(record).length).toBe(64);
    expect(r.stderr).toMatch(/stopped: 64 delivered, 0 refused, (63|64) waiting to be forwarded/);
  });
});
