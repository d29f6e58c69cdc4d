// Filters and routes at their edges: a filtered route whose app was down for long (each failed try adds a
// forward line to the record file, and a restart must still judge the deliveries that waited behind them as
// they were judged when they arrived); filters without any --forward-to (nothing to forward, nothing spooled).
import { appendFileSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/cli.js';
import { SIGNING_KEY } from '../helpers/emulator.js';
import { waitFor } from '../helpers/wait.js';
import { post, type RunningListener, startListener, TestApp } from './helpers.js';

let cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

async function listen(args: string[], env: Record<string, string> = {}): Promise<RunningListener> {
  const l = await startListener(args, { env: { CARDBOARD_SIGNING_KEY: SIGNING_KEY, ...env } });
  cleanup.push(async () => {
    if (l.child.exitCode === null) await l.stop('SIGKILL');
  });
  return l;
}

/** `n` forward lines as a listener appends them while an app answers 500 with a 4 KiB page (one a try, every 5 s at most). */
function outageLines(seq: number, url: string, n: number): string {
  const body = `<html>${'x'.repeat(4096 - 13)}</html>`;
  let out = '';
  for (let attempt = 2; attempt < n + 2; attempt++) {
    out += `${JSON.stringify({ forward: { seq, url, attempt, ok: false, at: '2026-11-27T16:00:00.000Z', status: 500, ms: 1.2, headers: { 'content-type': 'text/html' }, body, bodyTruncated: true } })}\n`;
  }
  return out;
}

describe('a filtered route whose app was down for long', () => {
  it('resumes with the decisions made when the deliveries arrived, past 32 MB of forward lines', async () => {
    const owners = new TestApp();
    await owners.up();
    cleanup.push(() => owners.down());
    await owners.down();
    const record = join(tempDir(), 'hooks.jsonl');
    const args = ['--record', record, '--forward-to', owners.url, '--changed', 'Owner'];
    const first = await listen(args);
    const sent = [
      '{"_id":"r1","Owner":"ann","Status":"Open"}', // taken: a new card with an Owner
      '{"_id":"r1","Owner":"ann","Status":"Done"}', // not taken: Owner unchanged
      '{"_id":"r1","Owner":"bob","Status":"Done"}', // taken
    ];
    for (const body of sent) expect(await post(first.url, body, SIGNING_KEY)).toBe(200);
    await first.waitFor(/#1 forward to .*500|#1 forward to .*ECONNREFUSED/);
    const ackLog = () => readdirSync(dirname(record)).find((f) => f.startsWith(`${basename(record)}.forwarded-`));
    await waitFor(() => ackLog() !== undefined, { what: "the route's ack log" });
    expect((await first.stop('SIGKILL')).signal).toBe('SIGKILL');
    // Some hours of tries of #1 (about 34 MB), as the listener would have written them.
    appendFileSync(record, outageLines(1, owners.url, 8200));
    await owners.up();
    const second = await listen(args);
    await second.waitFor(/Resuming: .*\n/);
    expect(second.stderr()).toContain('Resuming: 2 recorded deliveries were never forwarded; sending them first.');
    await owners.waitForCompleted(2);
    expect(await post(second.url, '{"_id":"r1","Owner":"cy","Status":"Done"}', SIGNING_KEY)).toBe(200);
    await owners.waitForCompleted(3);
    const r = await second.stop();
    expect(r.stderr).toContain('0 waiting to be forwarded');
    // #2 changed no Owner when it arrived: judged alone (as a new card) it would be sent.
    expect(owners.received.map((x) => x.body.toString())).toEqual([sent[0], sent[2], '{"_id":"r1","Owner":"cy","Status":"Done"}']);
    expect(readFileSync(record, 'utf8').length).toBeGreaterThan(33 * 1024 * 1024);
  }, 60_000);
});

describe('filters without --forward-to', () => {
  it('spool nothing: no file left behind, no word of forwarding', async () => {
    const tmp = join(tempDir(), 'tmp');
    mkdirSync(tmp);
    const listener = await listen(['--json', '--changed', 'Status'], { TMPDIR: tmp });
    expect(await post(listener.url, '{"_id":"n1","Status":"Open"}', SIGNING_KEY)).toBe(200);
    await listener.waitFor(/"seq":1/, 'stdout');
    const r = await listener.stop('SIGINT');
    expect(r.stderr).toContain('stopped: 1 delivered, 0 refused');
    expect(r.stderr).not.toMatch(/spool|forward/i);
    expect(readdirSync(tmp)).toEqual([]);
  });
});
