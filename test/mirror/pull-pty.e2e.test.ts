// Ctrl-C typed into `mirror pull` on a real terminal (spinner running): the process dies by SIGINT (130 in a
// shell, and a shell loop stops), after saying where the next pull resumes; the next pull resumes there.
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { startOnPty } from '../helpers/pty.js';
import { start, until } from '../import/helpers.js';
import { pageRequests } from '../helpers/emulator.js';
import { absent, ENGINES } from '../helpers/engines.js';
import { emuEnv, serverCards } from './pull-helpers.js';

describe.each(ENGINES)('mirror pull stopped by Ctrl-C on a pty ($name)', (engine) => {
  if (absent(engine)) return;

  it('ends by SIGINT (a shell sees 130), says how to resume, and the next pull resumes', async () => {
    const emu = await start({ seedCards: 150, pageSize: 5, faults: 'delay:80ms' });
    const file = await engine.mirror();
    const env = emuEnv(emu, file);
    // CI unset: the spinner runs, as on a user's terminal.
    const pty = startOnPty(['mirror', 'pull'], { ...env, CI: undefined });
    await pty.waitFor(/Reading the board/);
    await until(() => pageRequests(emu).length >= 6, 'the pull to read six pages');
    pty.type('\x03');
    // Death by SIGINT, which a shell reports as 130 (and a shell loop stops at).
    expect(await pty.ended).toEqual({ code: null, signal: 'SIGINT' });
    const screen = pty.raw();
    expect(screen).toMatch(/Interrupted: pull #1 stopped at page \d+ \(\d+ pages, \d+ cards saved\)\./);
    expect(screen).toContain('Run `cardboard mirror pull` again to resume');
    emu.setFaults(undefined);
    emu.resetRequests();
    const next = await runCli(['mirror', 'pull'], { env });
    expect(next.code, next.stderr).toBe(0);
    const at = Number(/Resuming pull #1 begun \S+ at page (\d+)/.exec(next.stderr)?.[1]);
    expect(at).toBeGreaterThanOrEqual(5);
    expect(pageRequests(emu).length).toBe(31 - at);
    expect((await engine.cards(file))).toEqual(serverCards(emu));
  });
});
