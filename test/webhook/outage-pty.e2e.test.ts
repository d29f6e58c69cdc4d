import { afterEach, describe, expect, it } from 'vitest';
import { startOnPty } from '../helpers/pty.js';
import { post, TestApp } from './helpers.js';

const KEY = 'sk-outage-pty';
const ERASE = '\r\u001b[2K';
let app: TestApp | undefined;
afterEach(async () => {
  await app?.down();
});

/** What a terminal shows for output made of lines and in-place redraws (`\r` + erase line). */
function visibleLines(raw: string): string[] {
  return raw.split(/\r?\n/).map((line) => line.split(ERASE).at(-1)!).filter((l) => l !== '');
}

describe('webhook listen on a terminal while --forward-to is down', () => {
  it('shows the outage as one line redrawn in place, then the recovery as a line', async () => {
    app = new TestApp();
    app.status = 503;
    await app.up();
    const term = startOnPty(['webhook', 'listen', '--port', '0', '--forward-to', app.url], { CARDBOARD_SIGNING_KEY: KEY, NO_COLOR: '1' }, { cols: 120 });
    const url = (await term.waitFor(/Listening on (\S+)/))[1]!;
    expect(await post(url, '{"_id":"p1","Name":"x"}', KEY)).toBe(200);
    // Causal: four tries reached the app; the line said so in place.
    await app.waitForCompleted(4);
    await term.waitFor(/forward down: 503 · for \d+s, 4 tries, 1 delivery waiting; retrying · http:\/\/\S+/);
    app.status = 200;
    await term.waitFor(/back up after \d+s down, \d+ tries\)/);
    term.type('\u0003');
    expect(await term.ended).toEqual({ code: null, signal: 'SIGINT' });
    const lines = visibleLines(term.raw());
    // Each try redrew the same line: on screen, one failure line and one recovery line, no line per try.
    expect(lines.filter((l) => l.includes('↳ #1 forward'))).toHaveLength(2);
    expect(lines.some((l) => /^forward down: /.test(l))).toBe(false);
    expect(term.raw().split(ERASE).filter((s) => s.startsWith('forward down: 503 · for ') && s.includes(` · ${app!.url}`)).length).toBeGreaterThanOrEqual(4);
    expect(lines.at(-1)).toMatch(/^(\^C)?stopped: 1 delivered, 0 refused/);
  });
});
