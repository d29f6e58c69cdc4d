// The pager: long output on a terminal goes through $CARDBOARD_PAGER / $PAGER / less -FRX; never
// piped, with --no-pager, for output that fits, or when set to '' or `cat`. A real pager process is run here
// with our "terminal" being a file it writes to (the fd of the test stdout).
import { closeSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isBrokenPipe } from '../../src/io/write.js';
import { DEFAULT_PAGER, pagerCommand, writePaged } from '../../src/io/pager.js';
import { tempDir } from '../helpers/cli.js';
import { testContext } from './buffers.js';

const dir = tempDir('cardboard-pager-');
const opened: number[] = [];
afterEach(() => {
  for (const fd of opened.splice(0)) closeSync(fd);
});

/** A terminal 80×`rows` whose screen is a file (`screen()`), env as given, --no-pager when `noPager`. */
function terminal(env: Record<string, string | undefined>, opts: { rows?: number; tty?: boolean; noPager?: boolean } = {}) {
  const t = testContext({ tty: opts.tty ?? true, env, globals: opts.noPager ? { pager: false } : {} });
  const file = join(dir, `screen-${opened.length}-${Math.random().toString(36).slice(2)}`);
  writeFileSync(file, '');
  const fd = openSync(file, 'a');
  opened.push(fd);
  Object.assign(t.stdout, { rows: opts.rows ?? 10, fd });
  return { ...t, screen: () => readFileSync(file, 'utf8') };
}

const long = Array.from({ length: 30 }, (_, i) => `line ${i}`).join('\n') + '\n';
const marker = `sh -c 'echo "PAGED LESS=$LESS"; cat'`;

describe('pagerCommand', () => {
  const ctxWith = (env: Record<string, string | undefined>, rows = 10) => terminal(env, { rows }).ctx;
  it('CARDBOARD_PAGER, else PAGER, else less -FRX', () => {
    expect(pagerCommand(ctxWith({ CARDBOARD_PAGER: 'most -s', PAGER: 'more' }), 20)).toBe('most -s');
    expect(pagerCommand(ctxWith({ PAGER: 'more' }), 20)).toBe('more');
    expect(pagerCommand(ctxWith({}), 20)).toBe(DEFAULT_PAGER);
  });
  it('none when set empty or to cat (even if PAGER is set), or when the output fits the screen', () => {
    expect(pagerCommand(ctxWith({ CARDBOARD_PAGER: '', PAGER: 'less' }), 20)).toBeUndefined();
    expect(pagerCommand(ctxWith({ CARDBOARD_PAGER: 'cat' }), 20)).toBeUndefined();
    expect(pagerCommand(ctxWith({ PAGER: '' }), 20)).toBeUndefined();
    // 9 lines and the prompt fit 10 rows; 10 lines do not.
    expect(pagerCommand(ctxWith({}), 9)).toBeUndefined();
    expect(pagerCommand(ctxWith({}), 10)).toBe('less -FRX');
  });
  it('none when not a terminal, or with --no-pager', () => {
    expect(pagerCommand(terminal({}, { tty: false }).ctx, 100)).toBeUndefined();
    expect(pagerCommand(terminal({}, { noPager: true }).ctx, 100)).toBeUndefined();
  });
});

describe('writePaged', () => {
  it('long output on a terminal goes through the pager (with LESS=FRX), nothing printed directly', async () => {
    const t = terminal({ CARDBOARD_PAGER: marker });
    await writePaged(t.ctx, long);
    expect(t.screen()).toBe(`PAGED LESS=FRX\n${long}`);
    expect(t.stdout.text).toBe('');
  });
  it("keeps the user's LESS", async () => {
    const t = terminal({ CARDBOARD_PAGER: marker, LESS: 'SR' });
    await writePaged(t.ctx, long);
    expect(t.screen()).toBe(`PAGED LESS=SR\n${long}`);
  });
  it('prints directly with --no-pager, piped, or when the output fits', async () => {
    for (const [opts, text] of [[{ noPager: true }, long], [{ tty: false }, long], [{}, 'one\ntwo\n']] as const) {
      const t = terminal({ CARDBOARD_PAGER: marker }, opts);
      await writePaged(t.ctx, text);
      expect(t.screen()).toBe('');
      expect(t.stdout.text).toBe(text);
    }
  });
  it('a pager that cannot be started (ENOENT), or that its shell cannot find (127): printed directly', async () => {
    const missing = terminal({ CARDBOARD_PAGER: join(dir, 'no-such-pager') });
    await writePaged(missing.ctx, long);
    expect(missing.stdout.text).toBe(long);
    expect(missing.stderr.text).toContain('no-such-pager` could not run (exit 127); printing directly');
    const notFound = terminal({ CARDBOARD_PAGER: `sh -c 'exit 127'` });
    await writePaged(notFound.ctx, long);
    expect(notFound.stdout.text).toBe(long);
    expect(notFound.stderr.text).toContain("the pager `sh -c 'exit 127'` could not run (exit 127); printing directly");
  });
  it('a pager quit before it read everything (q) ends with EPIPE, which main.ts turns into a quiet exit 0', async () => {
    const t = terminal({ CARDBOARD_PAGER: 'head -c 10' });
    const huge = 'x'.repeat(80).concat('\n').repeat(20_000);
    const err = await writePaged(t.ctx, huge).then(() => undefined, (e: unknown) => e);
    expect(isBrokenPipe(err)).toBe(true);
    expect(t.screen()).toBe('x'.repeat(10));
  });
  it('a pager killed by Ctrl-C ends the run as interrupted, by SIGINT (130); one killed by SIGTERM, by SIGTERM (143)', async () => {
    const t = terminal({ CARDBOARD_PAGER: `sh -c 'kill -INT $$'` });
    await expect(writePaged(t.ctx, long)).rejects.toMatchObject({ exitCode: 130, signal: 'SIGINT' });
    const u = terminal({ CARDBOARD_PAGER: `sh -c 'kill -TERM $$'` });
    await expect(writePaged(u.ctx, long)).rejects.toMatchObject({ exitCode: 143, signal: 'SIGTERM' });
  });
  it('runs the line with the shell, as git runs $PAGER: quotes, redirections and a path with a space', async () => {
    const spaced = join(dir, 'my pager.sh');
    writeFileSync(spaced, `#!/bin/sh\necho "ARGS $*" > '${join(dir, 'args')}'\ncat > /dev/null\n`, { mode: 0o755 });
    const t = terminal({ CARDBOARD_PAGER: `'${spaced}' -R "two words"` });
    await writePaged(t.ctx, long);
    expect(readFileSync(join(dir, 'args'), 'utf8')).toBe('ARGS -R two words\n');
    expect(t.stdout.text).toBe('');
  });
});
