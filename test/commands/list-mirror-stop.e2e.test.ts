// `card list --mirror` stops at Ctrl-C. The mirror's cards are read synchronously, and a writer whose reader
// keeps up (a file) never waits: without a turn of the event loop between batches, the signal was heard
// only once the last card was written, and the run exited 0 as if it had never been asked to stop.
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { Card } from '../../src/spec-types.js';
import { BIN, childEnv, tempDir } from '../helpers/cli.js';
import { until } from '../import/helpers.js';
import { absent, ENGINES } from '../helpers/engines.js';
import { fillMirror } from '../helpers/mirror.js';
import { FIELDS } from '../query/mirror-fixture.js';

/** Enough cards that writing them takes a good second after the listing has said where they come from. */
const CARDS: Card[] = Array.from({ length: 250_000 }, (_, i) => ({ _id: `c${i}`, Name: `card ${i}`, Status: i % 2 ? 'Open' : 'Done', Points: i % 7 }));

describe.each(ENGINES)('card list --mirror stopped by SIGINT ($name)', (engine) => {
  if (absent(engine)) return;

  it('while its cards are written to a file: ends by SIGINT, with part of the cards written', async () => {
    const dir = tempDir('cardboard-list-stop-');
    const env = { CARDBOARD_MIRROR: await engine.mirror(), CARDBOARD_BOARD: 'board-q', CARDBOARD_BASE_URL: 'http://127.0.0.1:9' };
    await fillMirror(env, { baseUrl: env.CARDBOARD_BASE_URL, id: env.CARDBOARD_BOARD }, CARDS, { fields: FIELDS });
    const out = join(dir, 'cards.ndjson');
    const fd = openSync(out, 'w');
    const child = spawn(process.execPath, [BIN, 'card', 'list', '--mirror', '--all', '--format', 'ndjson'], { env: childEnv({ env }), stdio: ['ignore', fd, 'pipe'] });
    closeSync(fd);
    onTestFinished(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
    // Said just before the walk of the cards begins.
    await until(() => stderr.includes('From the mirror'), 'the listing to begin');
    child.kill('SIGINT');
    expect(await ended, stderr).toEqual({ code: null, signal: 'SIGINT' });
    expect(stderr).toContain('error: Interrupted.');
    expect(readFileSync(out, 'utf8').split('\n').length).toBeLessThan(CARDS.length);
  });
});
