// `webhook send` and `webhook replay` interrupted while a receiver holds the delivery without answering: an
// interruption, told as one (not as "no answer", exit 1), and the process ends by the signal it was
// stopped by, so that a script looping over it stops (a shell reports 130 or 143).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { toRecordLine } from '../../src/webhook/delivery.js';
import { tempDir } from '../helpers/cli.js';
import { startLocalServer } from '../helpers/receiver.js';
import { until } from '../import/helpers.js';
import { spawnCli } from './helpers.js';

const KEY_ENV = { CARDBOARD_SIGNING_KEY: 'sk-silent-receiver' };

let cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

/** A receiver that accepts each delivery, reads it, and never answers; counts what arrived. */
async function silentReceiver(): Promise<{ url: string; arrived: () => number }> {
  let arrived = 0;
  const local = await startLocalServer((req) => {
    req.resume();
    req.on('end', () => arrived++);
  });
  cleanup.push(local.close);
  return { url: `${local.url}/hooks`, arrived: () => arrived };
}

function recordFile(n: number): string {
  const path = join(tempDir(), 'hooks.jsonl');
  const lines = Array.from({ length: n }, (_, i) => toRecordLine({ seq: i + 1, receivedAt: '2026-11-25T08:00:00.000Z', method: 'POST', path: '/', headers: { 'content-type': 'application/json' }, body: Buffer.from(`{"_id":"c${i + 1}"}`) }));
  writeFileSync(path, lines.join(''));
  return path;
}

describe('webhook send interrupted while the receiver holds the delivery', () => {
  it.each(['SIGINT', 'SIGTERM'] as const)('%s: "Interrupted", not "no answer", and the process ends by it', async (signal) => {
    const receiver = await silentReceiver();
    const cli = spawnCli(['webhook', 'send', '--to', receiver.url, '--data', '{"Name":"held"}'], { env: KEY_ENV });
    cleanup.push(() => cli.stop('SIGKILL'));
    await until(() => receiver.arrived() === 1);
    const r = await cli.stop(signal);
    expect({ code: r.code, signal: r.signal }, r.stderr).toEqual({ code: null, signal });
    expect(r.stderr).toContain(`error: Interrupted before ${receiver.url} answered.`);
    expect(r.stderr).not.toMatch(/no answer/);
    expect(r.stdout).toBe('');
  });
});

describe('webhook replay interrupted while the receiver holds a delivery', () => {
  it('Ctrl-C: waits its grace for the answer, names --from 1 to resume at, then ends by SIGINT', async () => {
    const receiver = await silentReceiver();
    const cli = spawnCli(['webhook', 'replay', recordFile(3), '--to', receiver.url], { env: KEY_ENV });
    cleanup.push(() => cli.stop('SIGKILL'));
    await until(() => receiver.arrived() === 1);
    const r = await cli.stop('SIGINT');
    expect({ code: r.code, signal: r.signal }, r.stderr).toEqual({ code: null, signal: 'SIGINT' });
    expect(r.stderr).toContain('Interrupted: finishing #1 in flight');
    expect(r.stderr).toContain('error: Interrupted after 0 deliveries.');
    expect(r.stderr).toContain('hint: Resume with --from 1.');
    expect(receiver.arrived()).toBe(1);
  });

  it('SIGTERM: cut off at once, resumable at the same delivery, and ends by SIGTERM', async () => {
    const receiver = await silentReceiver();
    const cli = spawnCli(['webhook', 'replay', recordFile(3), '--to', receiver.url], { env: KEY_ENV });
    cleanup.push(() => cli.stop('SIGKILL'));
    await until(() => receiver.arrived() === 1);
    const r = await cli.stop('SIGTERM');
    expect({ code: r.code, signal: r.signal }, r.stderr).toEqual({ code: null, signal: 'SIGTERM' });
    expect(r.stderr).toContain('error: Interrupted after 0 deliveries.');
    expect(r.stderr).toContain('hint: Resume with --from 1.');
    expect(receiver.arrived()).toBe(1);
  });
});
