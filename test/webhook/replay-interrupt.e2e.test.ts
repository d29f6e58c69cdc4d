import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/cli.js';
import { toRecordLine } from '../../src/webhook/delivery.js';
import { startOnPty } from '../helpers/pty.js';
import { spawnCli, TestApp } from './helpers.js';

let cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

function recordFile(n: number): string {
  const path = join(tempDir(), 'hooks.jsonl');
  const lines = Array.from({ length: n }, (_, i) => toRecordLine({ seq: i + 1, receivedAt: '2026-11-25T08:00:00.000Z', method: 'POST', path: '/', headers: { 'content-type': 'application/json' }, body: Buffer.from(`{"_id":"c${i + 1}"}`) }));
  writeFileSync(path, lines.join(''));
  return path;
}

/** A replay of 4 deliveries to a receiver that takes 400 ms each, stopped once #2 is being answered. */
async function interruptAtSecond(signal: NodeJS.Signals) {
  const app = new TestApp();
  app.delayMs = 400;
  await app.up();
  cleanup.push(() => app.down());
  const cli = spawnCli(['webhook', 'replay', recordFile(4), '--to', app.url], { env: { CARDBOARD_SIGNING_KEY: 'sk-interrupt' } });
  cleanup.push(() => cli.stop('SIGKILL'));
  // Causal: #1's answer is on stdout and #2 has reached the receiver, so #2 is in flight.
  await cli.waitFor(/^#1 {2}200 OK/m, 'stdout');
  await app.waitForArrived(2);
  const r = await cli.stop(signal);
  return { ...r, app };
}

describe('webhook replay interrupted: Ctrl-C names the --from that resumes', () => {
  it('Ctrl-C finishes the delivery in flight, names the --from that resumes after it, and ends by SIGINT', async () => {
    const r = await interruptAtSecond('SIGINT');
    expect({ code: r.code, signal: r.signal }, r.stderr).toEqual({ code: null, signal: 'SIGINT' });
    expect(r.stderr).toContain('Interrupted: finishing #2 in flight (Ctrl-C again to quit at once, then resume with --from 2)');
    expect(r.stdout).toMatch(/^#1 {2}200 OK.*\n#2 {2}200 OK/);
    expect(r.stderr).toContain('Interrupted after 2 deliveries.');
    expect(r.stderr).toContain('hint: Resume with --from 3.');
    expect(r.app.arrived).toBe(2);
  });

  it('SIGTERM cuts the delivery in flight: it was not answered, so the resume starts at it', async () => {
    const r = await interruptAtSecond('SIGTERM');
    expect({ code: r.code, signal: r.signal }, r.stderr).toEqual({ code: null, signal: 'SIGTERM' });
    expect(r.stdout).not.toContain('#2');
    expect(r.stderr).toContain('Interrupted after 1 delivery.');
    expect(r.stderr).toContain('hint: Resume with --from 2.');
  });

  it('on a terminal, Ctrl-C typed while #2 is in flight does the same (typed on a pty, Ctrl-C once ended a run that stopped gracefully piped)', async () => {
    const app = new TestApp();
    app.delayMs = 400;
    await app.up();
    cleanup.push(() => app.down());
    const term = startOnPty(['webhook', 'replay', recordFile(4), '--to', app.url], { CARDBOARD_SIGNING_KEY: 'sk-interrupt', NO_COLOR: '1' });
    await term.waitFor(/#1 {2}200 OK/);
    await app.waitForArrived(2);
    term.type('\u0003');
    expect(await term.ended, term.raw()).toEqual({ code: null, signal: 'SIGINT' });
    expect(term.raw()).toContain('then resume with --from 2)');
    expect(term.raw()).toMatch(/#2 {2}200 OK[^]*hint: Resume with --from 3\./);
    expect(app.arrived).toBe(2);
  });
});
