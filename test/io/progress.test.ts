import { realClock } from '../../src/clock.js';
import { describe, expect, it } from 'vitest';
import { canAnimate, createProgress } from '../../src/io/progress.js';
import { testContext } from './buffers.js';

describe('canAnimate', () => {
  it('needs a TTY with columns > 0 and no CI (ora spins at 100% CPU at 0 columns)', () => {
    const tty = testContext({ errTty: true, env: { CI: undefined } });
    expect(canAnimate(tty.ctx)).toBe(true);
    tty.stderr.columns = 0;
    expect(canAnimate(tty.ctx)).toBe(false);
    expect(canAnimate(testContext({ errTty: true, env: { CI: '1' } }).ctx)).toBe(false);
    expect(canAnimate(testContext({ errTty: false, env: { CI: undefined } }).ctx)).toBe(false);
  });
});

describe('createProgress, plain fallback', () => {
  it('escapes its text to one line; the coloured mark stays', async () => {
    // A terminal without animation (CI set): colour on, plain lines.
    const { ctx, stderr } = testContext({ errTty: true, env: { NO_COLOR: undefined, CI: '1', TERM: 'xterm' } });
    const p = await createProgress(ctx);
    p.start('reading a\u001b]0;pwned\u0007.csv');
    p.succeed('read a\u001b]0;pwned\u0007.csv\nnext');
    expect(stderr.text).toBe('reading a\\e]0;pwned\\a.csv\n\u001b[32m✔\u001b[39m read a\\e]0;pwned\\a.csv\\nnext\n');
  });
  it('escapes the text of the animated spinner too', async () => {
    const { ctx, stderr } = testContext({ errTty: true, env: { CI: undefined } });
    const p = await createProgress(ctx);
    p.start('reading evil\u202etxt\u001b]0;pwned\u0007');
    p.succeed();
    expect(stderr.text).toContain('reading evil\\u202etxt\\e]0;pwned\\a');
    expect(stderr.text).not.toContain('\u202e');
    expect(stderr.text).not.toContain('\u001b]0;');
  });
  it('prints the start, then at most one update per interval, then the final line', async () => {
    let now = 0;
    const { ctx, stderr } = testContext({ clock: { ...realClock, now: () => now } });
    const p = await createProgress(ctx, { intervalMs: 1000 });
    p.start('importing');
    now = 500;
    p.update('10 rows');
    now = 999;
    p.update('20 rows');
    now = 1000;
    p.update('30 rows');
    now = 1500;
    p.update('40 rows');
    p.succeed('40 rows imported');
    expect(stderr.text).toBe('importing\n30 rows\n✔ 40 rows imported\n');
  });
  it('stop() flushes the last update that was throttled away', async () => {
    const { ctx, stderr } = testContext({ clock: { ...realClock, now: () => 0 } });
    const p = await createProgress(ctx);
    p.start('a');
    p.update('b');
    p.stop();
    expect(stderr.text).toBe('a\nb\n');
  });
  it('fail() reports the current text', async () => {
    const { ctx, stderr } = testContext();
    const p = await createProgress(ctx);
    p.start('sending');
    p.fail();
    expect(stderr.text).toBe('sending\n✖ sending\n');
  });
  it('is silent under --quiet or when asked', async () => {
    for (const { ctx, stderr, silent } of [
      { ...testContext({ quiet: true }), silent: false },
      { ...testContext(), silent: true },
    ]) {
      const p = await createProgress(ctx, { silent });
      p.start('a');
      p.update('b');
      p.succeed('c');
      expect(stderr.text).toBe('');
    }
  });
});

describe('createProgress, spinner', () => {
  it('animates on a TTY stderr and persists the final line', async () => {
    const { ctx, stdout, stderr } = testContext({ errTty: true, env: { CI: undefined } });
    const p = await createProgress(ctx);
    p.start('working');
    p.update('still working');
    p.succeed('finished');
    expect(stderr.text).toContain('finished');
    expect(stderr.text).toContain('✔ finished');
    // The spinner drew on the terminal: it cleared the line before each frame.
    expect(stderr.text).toContain('\u001b[2K');
    expect(stdout.text).toBe('');
  });
});
